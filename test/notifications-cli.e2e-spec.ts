import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, runChecks } from '../src/cli';
import { loadConfig } from '../src/config/config';
import { SmtpTestServer } from './helpers/smtp';
import { captureStdout } from './helpers/stdout';

/** `cli check` talks to the SMTP server (EHLO, STARTTLS, AUTH); `cli send-test-email` sends one mail. */
describe('CLI and email', () => {
  let smtp: SmtpTestServer;
  let dir: string;
  const stdout = captureStdout();
  const base = () => ({
    DATA_DIR: dir,
    DATABASE_URL: '',
    EMBEDDED_DB_DIR: join(dir, 'db'),
    LOG_LEVEL: 'silent',
    SSH_ENABLED: 'false',
    EXTERNAL_URL: 'http://gitlab.test',
    SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
  });

  beforeAll(async () => {
    smtp = await SmtpTestServer.start();
    dir = mkdtempSync(join(tmpdir(), 'glv3-cli-mail-'));
  });
  afterAll(async () => {
    await smtp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('check: smtp ok with the right credentials, FAILED with wrong ones or no server, off without SMTP_URL', async () => {
    await runChecks(loadConfig({ ...base(), ...smtp.env() }));
    expect(stdout.text).toMatch(new RegExp(`^smtp \\(smtp://127\\.0\\.0\\.1:${smtp.port}\\): ok$`, 'm'));
    stdout.clear();
    expect(await runChecks(loadConfig({ ...base(), ...smtp.env({ SMTP_PASSWORD: 'wrong' }) }))).toBe(false);
    expect(stdout.text).toMatch(/^smtp \(.*\): FAILED: .*(Invalid username or password|535)/m);
    stdout.clear();
    await runChecks(loadConfig({ ...base(), ...smtp.env({ SMTP_TLS_CA_FILE: '' }) }));
    expect(stdout.text).toMatch(/^smtp \(.*\): FAILED: .*certificate/m); // STARTTLS offered: a certificate it cannot verify is refused
    stdout.clear();
    await runChecks(loadConfig({ ...base(), SMTP_URL: 'smtp://127.0.0.1:1' }));
    expect(stdout.text).toMatch(/^smtp \(smtp:\/\/127\.0\.0\.1:1\): FAILED: /m);
    stdout.clear();
    await runChecks(loadConfig(base()));
    expect(stdout.text).toMatch(/^smtp: off/m);
    expect(stdout.text).not.toContain('smtp-secret-password');
  }, 60_000);

  it('send-test-email --to ADDRESS: one mail, through STARTTLS and AUTH', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, base(), smtp.env());
    try {
      expect(await main(['send-test-email', '--to', 'ops@example.com'])).toBe(0);
    } finally {
      process.env = saved;
    }
    await smtp.waitFor((ms) => ms.some((m) => m.to[0] === 'ops@example.com'));
    const m = smtp.to('ops@example.com')[0];
    expect(m.secure).toBe(true);
    expect(m.parsed.subject).toBe('Test email from gitlab.test');
    expect(m.parsed.from?.value[0].address).toBe('gitlab@gitlab.test');
    expect(stdout.text).toContain('test email sent to ops@example.com');
  });
});
