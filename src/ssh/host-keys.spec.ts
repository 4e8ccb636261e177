import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { generateReadable, loadHostKeys } from './host-keys';

/** An Ed25519 key from ssh2's generator that ssh2's parser refuses (about one in 250). */
function unreadableKey(): string {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (utils.parseKey(pair.private) instanceof Error) return pair.private;
  }
}

describe('SSH host keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-host-keys-spec-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a generated key that ssh2 cannot read back is never kept: another one is made', () => {
    const bad = unreadableKey();
    const good = utils.generateKeyPairSync('ed25519').private;
    const made = [bad, bad, good];
    expect(generateReadable(() => ({ private: made.shift()! }))).toBe(good);
    expect(made).toEqual([]);
    expect(() => generateReadable(() => ({ private: bad }))).toThrow(/could not generate an SSH host key/);
  });

  it('generates both keys on first start, readable by ssh2, and reads the same ones again', () => {
    const data = join(dir, 'fresh');
    mkdirSync(data);
    const first = loadHostKeys(data, []);
    expect(first.map((k) => k.type).sort()).toEqual(['ed25519', 'rsa']);
    for (const k of first) expect(utils.parseKey(k.privateKey)).not.toBeInstanceOf(Error);
    expect(loadHostKeys(data, []).map((k) => k.fingerprint)).toEqual(first.map((k) => k.fingerprint));
  });

  it('a key file ssh2 cannot read is refused with its name and what to do', () => {
    const file = join(dir, 'bad_key');
    writeFileSync(file, unreadableKey());
    expect(() => loadHostKeys(dir, [file])).toThrow(`SSH host key ${file} cannot be used`);
    expect(readFileSync(file, 'utf8')).toContain('OPENSSH PRIVATE KEY');
  });
});
