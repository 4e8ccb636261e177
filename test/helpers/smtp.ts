import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  /** RCPT TO addresses of the envelope. */
  to: string[];
  from: string;
  parsed: ParsedMail;
  /** Whether the session was upgraded to TLS (STARTTLS) and who authenticated. */
  secure: boolean;
  user?: string;
}

/** How the server answers a RCPT TO: a code and message (4xx temporary, 5xx permanent). */
export type Refusal = { code: number; message: string };

export const SMTP_USER = 'mailer';
export const SMTP_PASSWORD = 'smtp-secret-password';

/**
 * A real SMTP server in the test process (smtp-server): STARTTLS with a self-signed certificate made
 * by openssl (its PEM is `caFile`, for SMTP_TLS_CA_FILE), AUTH PLAIN/LOGIN with SMTP_USER /
 * SMTP_PASSWORD, on a free loopback port that `stop()` / `start()` keep (the server going away and
 * coming back). Every accepted mail is parsed with mailparser.
 */
export class SmtpTestServer {
  readonly received: ReceivedMail[] = [];
  /** Answers for RCPT TO of these addresses (lowercase), instead of accepting. */
  readonly refuse = new Map<string, Refusal>();
  readonly caFile: string;
  private readonly dir: string;
  private server?: SMTPServer;
  port = 0;
  private waiters: (() => void)[] = [];

  private constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'smtp-test-'));
    this.caFile = join(this.dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        join(this.dir, 'key.pem'),
        '-out',
        this.caFile,
      ],
      { stdio: 'ignore' },
    );
  }

  static async start(): Promise<SmtpTestServer> {
    const s = new SmtpTestServer();
    await s.start();
    return s;
  }

  /** SMTP_URL (without credentials) and the settings the app needs to reach this server. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      SMTP_URL: `smtp://127.0.0.1:${this.port}`,
      SMTP_USER,
      SMTP_PASSWORD,
      SMTP_TLS_CA_FILE: this.caFile,
      SMTP_TIMEOUT_MS: '5000',
      EMAIL_RETRY_DELAY_SECONDS: '1',
      QUEUE_POLL_SECONDS: '0.5',
      ...extra,
    };
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      secure: false,
      key: readFileSync(join(this.dir, 'key.pem')),
      cert: readFileSync(this.caFile),
      authMethods: ['PLAIN', 'LOGIN'],
      // no AUTH in clear text: the client must have upgraded with STARTTLS first
      allowInsecureAuth: false,
      logger: false,
      onAuth: (auth, _session, cb) => {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
        else cb(new Error('Invalid username or password'));
      },
      onRcptTo: (address, _session, cb) => {
        const r = this.refuse.get(address.address.toLowerCase());
        if (!r) return cb();
        const err = new Error(r.message) as Error & { responseCode: number };
        err.responseCode = r.code;
        cb(err);
      },
      onData: (stream: SMTPServerDataStream, session: SMTPServerSession, cb) => {
        simpleParser(stream)
          .then((parsed) => {
            this.received.push({
              to: session.envelope.rcptTo.map((a) => a.address),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              parsed,
              secure: session.secure,
              user: session.user as string | undefined,
            });
            for (const w of this.waiters.splice(0)) w();
            cb();
          })
          .catch((e: Error) => cb(e));
      },
    });
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and drops open connections (the port stays this server's for `start()`). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Mails received for `address`. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to.some((a) => a.toLowerCase() === address.toLowerCase()));
  }

  /** Waits until `predicate` holds of the received mails (or fails after `timeoutMs`). */
  async waitFor(predicate: (mails: ReceivedMail[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      const left = end - Date.now();
      if (left <= 0)
        throw new Error(`SMTP: timed out; received ${this.received.length}: ${this.received.map((m) => `${m.to.join(',')} ${m.parsed.subject}`).join(' / ')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** No more mail for `ms` (to assert that nobody else is mailed). */
  async quiet(ms = 1500): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
