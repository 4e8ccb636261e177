import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig, LogLevel } from '../../config/config';

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };
const SECRET_KEYS = /^(private_token|access_token|refresh_token|password|token|authorization|private-token|secret|.*_token)$/i;

/** Replaces the values of credential-like keys (tokens, passwords, Authorization) with "[FILTERED]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 5 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEYS.test(k) ? '[FILTERED]' : redact(v, depth + 1);
  }
  return out;
}

/** One JSON object per line on stdout, secrets redacted. */
@Injectable()
export class Logger {
  private readonly threshold: number;
  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'logLevel'>) {
    this.threshold = ORDER[config.logLevel];
  }

  enabled(level: LogLevel): boolean {
    return ORDER[level] <= this.threshold && level !== 'silent';
  }

  log(level: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown> = {}): void {
    if (!this.enabled(level)) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...(redact(fields) as object) });
    process.stdout.write(line + '\n');
  }
  error(msg: string, fields?: Record<string, unknown>) {
    this.log('error', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>) {
    this.log('warn', msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>) {
    this.log('info', msg, fields);
  }
  debug(msg: string, fields?: Record<string, unknown>) {
    this.log('debug', msg, fields);
  }
}
