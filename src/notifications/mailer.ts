import nodemailer, { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { EmailConfig } from '../config/config';

/** One mail as the notification area builds it. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Message-ID, In-Reply-To, References (without angle brackets), and the X-/List- headers. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  headers: Record<string, string>;
}

/** Why a mail was not accepted: `temporary` (4xx, network, timeout: try again later) or not (5xx). */
export class MailRejected extends Error {
  constructor(
    message: string,
    readonly temporary: boolean,
  ) {
    super(message);
  }
}

/**
 * The SMTP client (nodemailer, one pooled transport per process). `smtp://` upgrades with STARTTLS
 * whenever the server offers it and fails rather than go on in clear text when the upgrade fails;
 * `smtps://` is TLS from the first byte. Certificates are verified (SMTP_TLS_CA_FILE adds a CA).
 */
export class Mailer {
  private readonly transport: Transporter;

  constructor(private readonly config: EmailConfig) {
    const u = new URL(config.smtpUrl);
    const secure = u.protocol === 'smtps:';
    const options: SMTPPool.Options = {
      pool: true,
      maxConnections: 5,
      maxMessages: 100,
      host: u.hostname,
      port: u.port ? Number(u.port) : secure ? 465 : 25,
      secure,
      auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
      tls: { rejectUnauthorized: true, ...(config.tlsCa ? { ca: config.tlsCa } : {}) },
      connectionTimeout: config.timeoutMs,
      greetingTimeout: config.timeoutMs,
      socketTimeout: config.timeoutMs,
      name: undefined,
    };
    this.transport = nodemailer.createTransport(options);
  }

  /** Connects, says EHLO, upgrades to TLS when offered and authenticates: resolves when all of that works. */
  async verify(): Promise<void> {
    try {
      await this.transport.verify();
    } catch (e) {
      throw classify(e);
    }
  }

  /** Sends one mail; resolves when the server accepted it. */
  async send(mail: OutgoingMail): Promise<void> {
    try {
      const info = await this.transport.sendMail({
        from: this.config.from,
        replyTo: this.config.replyTo,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${mail.messageId}>`,
        inReplyTo: mail.inReplyTo ? `<${mail.inReplyTo}>` : undefined,
        references: mail.references?.map((r) => `<${r}>`),
        headers: mail.headers,
      });
      if (info.rejected && info.rejected.length > 0) throw new MailRejected(`recipient rejected: ${String(info.response ?? '')}`, false);
    } catch (e) {
      throw classify(e);
    }
  }

  close(): void {
    this.transport.close();
  }
}

/** 5xx answers are final (except authentication, which an administrator can fix); everything else is worth another try. */
export function classify(e: unknown): MailRejected {
  if (e instanceof MailRejected) return e;
  const err = e as { message?: string; responseCode?: number; code?: string; response?: string };
  const message = (err.response || err.message || String(e)).replace(/\s+/g, ' ').slice(0, 500);
  const code = err.responseCode;
  const permanent = typeof code === 'number' && code >= 500 && code < 600 && err.code !== 'EAUTH';
  return new MailRejected(message, !permanent);
}
