import { checkOutboundUrl, isLocalAddress, OutboundUrlRefused } from './outbound-url';

describe('isLocalAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '64:ff9b::7f00:1',
    // IPv4-mapped, IPv4-compatible (::/96), IPv4-translated and 6to4 forms of local addresses
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '::7f00:1',
    '::a9fe:a9fe',
    '::10.0.0.1',
    '::ffff:0:127.0.0.1',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::',
    'not-an-ip',
    '',
    '1.2.3.4.5',
  ])('%s is local', (a) => expect(isLocalAddress(a)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::8.8.8.8', '2002:808:808::1'])('%s is public', (a) =>
    expect(isLocalAddress(a)).toBe(false),
  );
});

describe('checkOutboundUrl', () => {
  it.each([
    'http://[::127.0.0.1]:8080/x.git',
    'http://[::7f00:1]/x.git',
    'http://[::a9fe:a9fe]/latest/meta-data/',
    'http://[::ffff:127.0.0.1]/x.git',
    'http://127.1/x.git',
    'http://2130706433/x.git',
    'http://0x7f000001/x.git',
  ])('refuses %s', async (url) => {
    await expect(checkOutboundUrl(url, false)).rejects.toBeInstanceOf(OutboundUrlRefused);
  });

  it('allows local forms when the admin allows the local network', async () => {
    await expect(checkOutboundUrl('http://[::7f00:1]/x.git', true)).resolves.toMatchObject({ host: '::7f00:1' });
  });

  it.each(['http://a@127.0.0.1@example.com/', 'http://u:p@evil@example.com/x', 'https://a@b@c@example.com/'])(
    'refuses the ambiguous userinfo form %s, even with the local network allowed',
    async (url) => {
      await expect(checkOutboundUrl(url, true)).rejects.toThrow('is not a valid URL');
    },
  );

  it('refuses other schemes', async () => {
    await expect(checkOutboundUrl('file:///etc/passwd', false)).rejects.toThrow('must use http or https');
  });
});
