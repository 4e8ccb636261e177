import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { LdapConfig, parseLdapConfig } from './ldap-config';
import { PagesConfig, parsePagesConfig } from './pages-config';
import { LfsConfig, parseLfsConfig } from './lfs-config';

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';
const LOG_LEVELS: LogLevel[] = ['silent', 'error', 'warn', 'info', 'debug'];

/** Deploy settings, read from the environment and validated once at boot (`.env.example` lists them). */
export interface AppConfig {
  port: number;
  host: string;
  /** Base of every URL the API returns, without a trailing slash. */
  externalUrl: string;
  dataDir: string;
  /** `postgres://...` for PostgreSQL; undefined runs embedded PGlite under `dataDir/db`. */
  databaseUrl?: string;
  /** Embedded database folder, or `memory://` for an in-memory one (tests). */
  embeddedDbDir: string;
  /** Memory settings of the embedded server (EMBEDDED_SHARED_BUFFERS, EMBEDDED_WORK_MEM). */
  embeddedTuning: { sharedBuffers: string; workMem: string; maintenanceWorkMem: string };
  /** Key for token digests and encryption of tokens the API must show again. */
  secretKey: Buffer;
  /**
   * Express `trust proxy` value: false, true, a hop count, or the addresses/CIDR ranges of the
   * proxies whose `X-Forwarded-For` is believed (validated at boot; `loopback`, `linklocal` and
   * `uniquelocal` name ranges).
   */
  trustProxy: boolean | number | string[];
  /** Largest file the files API returns inside its JSON answer (base64); larger ones answer 413. */
  filesApiJsonMaxBytes: number;
  logLevel: LogLevel;
  rootPassword?: string;
  dbPoolSize: number;
  /** Background jobs (src/queue): whether this instance runs workers, and how often they poll. */
  queue: { workers: boolean; pollSeconds: number };
  /** Webhook delivery (system hooks and project hooks). */
  webhooks: { timeoutMs: number; retryLimit: number; retryDelaySeconds: number; disableAfterFailures: number };
  /** Longest a single SQL statement may run (ms); past it the request answers 503. */
  dbStatementTimeoutMs: number;
  /** Recurring statements as named prepared statements (PostgreSQL: on unless DB_PREPARED_STATEMENTS=false; embedded: off unless =true). */
  dbPreparedStatements: boolean;
  /** How long SIGTERM waits for in-flight requests, git transfers and queue workers (ms). */
  shutdownTimeoutMs: number;
  /** Browser origins allowed by CORS (exact `scheme://host[:port]`); empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Addresses or CIDR ranges besides loopback that may read `/-/metrics`. */
  metricsAllowedIps: string[];
  /**
   * GitLab 8's ban on git over HTTP (`rack_attack.git_basic_auth`): `maxRetry` failed Basic-auth
   * attempts from one IP within `findTimeSeconds` ban it for `banTimeSeconds` (`maxRetry` 0: off).
   */
  gitAuthBan: { maxRetry: number; findTimeSeconds: number; banTimeSeconds: number; ipWhitelist: string[] };
  /**
   * The cap on git transfer processes (clone, fetch, push, archive; HTTP and SSH) of this instance
   * (src/git/transfer-limiter.ts): how many run, how many wait beyond them, how long one may wait, and
   * the share of each client (a user, a CI build's project, an anonymous address) of both.
   */
  gitTransfers: { maxRunning: number; maxQueued: number; queueTimeoutMs: number; maxRunningPerClient?: number; maxQueuedPerClient?: number };
  /**
   * How long the request of a smart HTTP POST (an upload-pack request, a push's list of ref updates) may
   * take to arrive before it is refused (408); it is read before git starts (src/git/smart-http-request.ts).
   */
  gitHttpRequestTimeoutMs: number;
  /** Start git through the spawn broker (src/git/spawn-broker.ts) rather than from the server's own process. */
  gitSpawnBroker: boolean;
  /** Optional request rate limit per IP and per token over `periodSeconds` (0: off, the default). */
  rateLimit: { perIp: number; perToken: number; periodSeconds: number };
  /** The built-in SSH server for git (src/ssh). */
  ssh: SshConfig;
  /** What clone URLs over SSH begin with: `git@HOST:` on port 22, `ssh://git@HOST:PORT/` on any other. */
  sshUrlPrefix: string;
  /** Email notifications (src/notifications); undefined when SMTP_URL is unset: notifications are off. */
  email?: EmailConfig;
  /** LDAP sign-in and synchronisation (src/ldap); no servers: off. */
  ldap: LdapConfig;
  /** GitLab Pages (src/pages): PAGES_DOMAIN unset: off. */
  pages: PagesConfig;
  /** Git LFS (src/lfs): LFS_ENABLED, LFS_MAX_OBJECT_SIZE. */
  lfs: LfsConfig;
}

export interface EmailConfig {
  /** `smtp://` (STARTTLS required when the server offers it) or `smtps://` (TLS from the start), without credentials. */
  smtpUrl: string;
  user?: string;
  password?: string;
  /** `gitlab@HOST` of EXTERNAL_URL unless EMAIL_FROM is set. */
  from: string;
  replyTo?: string;
  /** Put before every subject (EMAIL_SUBJECT_PREFIX), with a space, when set. */
  subjectPrefix: string;
  /** Attempts after the first on temporary SMTP or network errors (exponential backoff from the delay). */
  retryLimit: number;
  retryDelaySeconds: number;
  timeoutMs: number;
  /** PEM file of the CA that signed the SMTP server's certificate, besides the system's (SMTP_TLS_CA_FILE). */
  tlsCa?: string;
}

function readCaFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new ConfigError(`SMTP_TLS_CA_FILE: cannot read ${file}`);
  }
}

/**
 * SMTP_URL and the EMAIL_* settings. The user and password come from the URL or SMTP_USER /
 * SMTP_PASSWORD (these win); the URL kept in the config carries no credentials (it is logged).
 */
export function parseEmailConfig(env: NodeJS.ProcessEnv, externalUrl: string): EmailConfig | undefined {
  const raw = (env.SMTP_URL ?? '').trim();
  if (!raw) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');
  if (!u.hostname) throw new ConfigError('SMTP_URL must name a host');
  const user = env.SMTP_USER || (u.username ? decodeURIComponent(u.username) : undefined);
  const password = env.SMTP_PASSWORD || (u.password ? decodeURIComponent(u.password) : undefined);
  u.username = '';
  u.password = '';
  const from = (env.EMAIL_FROM || `gitlab@${new URL(externalUrl).hostname}`).trim();
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(from) && !/<[^\s@<>]+@[^\s@<>]+>\s*$/.test(from)) {
    throw new ConfigError(`EMAIL_FROM must be an email address, got "${from}"`);
  }
  return {
    smtpUrl: `${u.protocol}//${u.host}`,
    user,
    password,
    from,
    replyTo: env.EMAIL_REPLY_TO || undefined,
    subjectPrefix: (env.EMAIL_SUBJECT_PREFIX ?? '').trim(),
    retryLimit: intEnv(env, 'EMAIL_RETRY_LIMIT', 8, 0, 25),
    retryDelaySeconds: intEnv(env, 'EMAIL_RETRY_DELAY_SECONDS', 30, 1, 3600),
    timeoutMs: intEnv(env, 'SMTP_TIMEOUT_MS', 30_000, 100, 600_000),
    tlsCa: env.SMTP_TLS_CA_FILE ? readCaFile(env.SMTP_TLS_CA_FILE) : undefined,
  };
}

export interface SshConfig {
  enabled: boolean;
  /** Listening port (SSH_PORT, default 2222 so that it runs unprivileged; 0 picks a free one). */
  port: number;
  /** Whether SSH_PORT was set: a port in use is then fatal; the default port in use only skips SSH. */
  portExplicit: boolean;
  listen: string;
  /** The port URLs show (SSH_EXTERNAL_PORT) when a proxy or port mapping sits in front. */
  externalPort?: number;
  /** Host keys to load instead of generating them into DATA_DIR (SSH_HOST_KEY_FILES). */
  hostKeyFiles: string[];
  maxSessions: number;
  maxSessionsPerIp: number;
  authTimeoutMs: number;
  idleTimeoutMs: number;
  /** How long a git command's client has to send its first request, no transfer slot held meanwhile (SSH_REQUEST_TIMEOUT). */
  requestTimeoutMs: number;
}

export class ConfigError extends Error {}

function intEnv(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return n;
}

function floatEnv(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return n;
}

const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An IPv4/IPv6 address, a CIDR range of one, or a range name (what proxy-addr accepts, minus netmask notation). */
function isProxyAddress(entry: string): boolean {
  if (TRUST_PROXY_NAMES.includes(entry)) return true;
  const [addr, bits, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(addr);
  if (!v4 && !(addr.includes(':') && ipaddr.IPv6.isValid(addr))) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128));
}

/**
 * TRUST_PROXY: `false`, `true` (every hop: only when nothing but the proxy can reach the app), a hop
 * count, or a list of the proxies' addresses and CIDR ranges (`172.28.0.10`, `10.0.0.0/8, ::1`,
 * `loopback`): then `X-Forwarded-For` is believed only from those peers, so a client that reaches
 * the app directly cannot choose the IP the sign-in throttle and bans count.
 */
export function parseTrustProxy(raw: string | undefined): boolean | number | string[] {
  const v = (raw ?? '').trim();
  if (v === '' || /^(false|0|no)$/i.test(v)) return false;
  if (/^(true|yes)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  const list = listEnv(v);
  const bad = list.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY: "${bad}" is not an address or CIDR range (use false, true, a hop count, or addresses/CIDRs such as 172.28.0.10 or 10.0.0.0/8; names: ${TRUST_PROXY_NAMES.join(', ')})`,
    );
  }
  return list;
}

function listEnv(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseOrigins(raw: string | undefined): string[] {
  return listEnv(raw).map((o) => {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new ConfigError(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port])`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== o.replace(/\/$/, '')) {
      throw new ConfigError(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port])`);
    }
    return u.origin;
  });
}

/** Reads the key from SECRET_KEY, else from `<dataDir>/secret_key`, creating it (0600) on first start. */
function loadSecretKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const fromEnv = env.SECRET_KEY;
  if (fromEnv) {
    if (fromEnv.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters');
    return Buffer.from(fromEnv, 'utf8');
  }
  const file = join(dataDir, 'secret_key');
  if (!existsSync(file)) {
    // created whole and at most once (a hard link fails if the name exists): processes starting at
    // once on a new DATA_DIR (a server and a CLI command, instances sharing it) must not each keep
    // a key of their own — the loser's tokens and encrypted columns would be unreadable to the others
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, randomBytes(48).toString('base64url') + '\n', { mode: 0o600 });
    chmodSync(tmp, 0o600);
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
}

/** A Postgres memory size (`16MB`, `512kB`, `1GB`): validated here, since it becomes a server setting. */
function memEnv(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const v = (env[name] || fallback).trim();
  if (!/^[1-9][0-9]{0,6}(kB|MB|GB)$/.test(v)) throw new ConfigError(`${name} must be a size like 16MB, got "${v}"`);
  return v;
}

/**
 * GIT_MAX_TRANSFERS and its companions (src/git/transfer-limiter.ts). A client's shares, unless set,
 * are the limiter's defaults: half the running slots and a quarter of the queue, rounded up.
 */
function gitTransferLimits(env: NodeJS.ProcessEnv): AppConfig['gitTransfers'] {
  // pack-objects is CPU-bound: two per core keep the cores busy while some transfers wait on the network
  const maxRunning = intEnv(env, 'GIT_MAX_TRANSFERS', Math.max(2, 2 * availableParallelism()), 1, 10_000);
  const maxQueued = intEnv(env, 'GIT_MAX_QUEUED', 100, 0, 100_000);
  return {
    maxRunning,
    maxQueued,
    queueTimeoutMs: intEnv(env, 'GIT_QUEUE_TIMEOUT', 30, 1, 3600) * 1000,
    maxRunningPerClient: env.GIT_MAX_TRANSFERS_PER_CLIENT ? intEnv(env, 'GIT_MAX_TRANSFERS_PER_CLIENT', maxRunning, 1, maxRunning) : undefined,
    maxQueuedPerClient: env.GIT_MAX_QUEUED_PER_CLIENT ? intEnv(env, 'GIT_MAX_QUEUED_PER_CLIENT', maxQueued, 0, maxQueued) : undefined,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const dataDir = resolve(env.DATA_DIR || './data');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const port = intEnv(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const externalUrl = (env.EXTERNAL_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const u = new URL(externalUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    if (u.username || u.password) throw new ConfigError('EXTERNAL_URL must not carry credentials');
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`EXTERNAL_URL must be an http(s) URL, got "${externalUrl}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  if (env.ROOT_PASSWORD !== undefined && env.ROOT_PASSWORD !== '' && env.ROOT_PASSWORD.length < 8) {
    throw new ConfigError('ROOT_PASSWORD must be at least 8 characters');
  }
  const sshPortExplicit = env.SSH_PORT !== undefined && env.SSH_PORT !== '';
  const ssh: SshConfig = {
    enabled: !/^(false|0|no|off)$/i.test(env.SSH_ENABLED ?? ''),
    port: intEnv(env, 'SSH_PORT', 2222, 0, 65535),
    portExplicit: sshPortExplicit,
    listen: env.SSH_LISTEN || env.SSH_HOST || host,
    externalPort: env.SSH_EXTERNAL_PORT ? intEnv(env, 'SSH_EXTERNAL_PORT', 22, 1, 65535) : undefined,
    hostKeyFiles: listEnv(env.SSH_HOST_KEY_FILES),
    maxSessions: intEnv(env, 'SSH_MAX_SESSIONS', 200, 1, 100_000),
    maxSessionsPerIp: intEnv(env, 'SSH_MAX_SESSIONS_PER_IP', 20, 1, 100_000),
    authTimeoutMs: intEnv(env, 'SSH_AUTH_TIMEOUT', 30, 1, 3600) * 1000,
    idleTimeoutMs: intEnv(env, 'SSH_IDLE_TIMEOUT', 600, 1, 86_400) * 1000,
    requestTimeoutMs: intEnv(env, 'SSH_REQUEST_TIMEOUT', 60, 1, 3600) * 1000,
  };
  // a disabled server keeps the field (clients expect it): then it shows port 22 unless told otherwise
  const sshShownPort = ssh.externalPort ?? (ssh.enabled ? ssh.port : 22);
  const sshHost = new URL(externalUrl).hostname;
  const sshUrlPrefix = sshShownPort === 22 ? `git@${sshHost}:` : `ssh://git@${sshHost}:${sshShownPort}/`;
  return {
    port,
    host,
    externalUrl,
    dataDir,
    databaseUrl,
    embeddedDbDir: env.EMBEDDED_DB_DIR || join(dataDir, 'db'),
    embeddedTuning: {
      sharedBuffers: memEnv(env, 'EMBEDDED_SHARED_BUFFERS', '16MB'),
      workMem: memEnv(env, 'EMBEDDED_WORK_MEM', '4MB'),
      maintenanceWorkMem: memEnv(env, 'EMBEDDED_MAINTENANCE_WORK_MEM', '16MB'),
    },
    secretKey: loadSecretKey(env, dataDir),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    // the base64 answer costs ~4x the file in memory; raw routes stream any size
    filesApiJsonMaxBytes: intEnv(env, 'FILES_API_JSON_MAX_BYTES', 50 * 1024 * 1024, 1, 256 * 1024 * 1024),
    logLevel,
    rootPassword: env.ROOT_PASSWORD || undefined,
    dbPoolSize: intEnv(env, 'DB_POOL_SIZE', 10, 1, 200),
    queue: {
      workers: !/^(false|0|no)$/i.test(env.QUEUE_WORKERS ?? ''),
      pollSeconds: floatEnv(env, 'QUEUE_POLL_SECONDS', 2, 0.5, 60),
    },
    webhooks: {
      timeoutMs: intEnv(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
      retryLimit: intEnv(env, 'WEBHOOK_RETRY_LIMIT', 5, 0, 25),
      retryDelaySeconds: intEnv(env, 'WEBHOOK_RETRY_DELAY_SECONDS', 10, 1, 3600),
      disableAfterFailures: intEnv(env, 'WEBHOOK_DISABLE_AFTER_FAILURES', 40, 0, 1_000_000),
    },
    dbStatementTimeoutMs: intEnv(env, 'DB_STATEMENT_TIMEOUT', 15, 0, 3600) * 1000,
    // default: on for PostgreSQL; off on the embedded default, where the plans live in this process
    // (measured: +94 MB peak under the issues list load, for +20 % of its throughput)
    dbPreparedStatements: env.DB_PREPARED_STATEMENTS ? !/^(false|0|no)$/i.test(env.DB_PREPARED_STATEMENTS) : !!databaseUrl,
    shutdownTimeoutMs: intEnv(env, 'SHUTDOWN_TIMEOUT', 30, 1, 3600) * 1000,
    corsOrigins: parseOrigins(env.CORS_ORIGINS),
    metricsAllowedIps: listEnv(env.METRICS_ALLOWED_IPS),
    gitAuthBan: {
      maxRetry: intEnv(env, 'GIT_AUTH_BAN_MAX_RETRY', 10, 0, 1_000_000),
      findTimeSeconds: intEnv(env, 'GIT_AUTH_BAN_FIND_TIME', 60, 1, 86_400),
      banTimeSeconds: intEnv(env, 'GIT_AUTH_BAN_TIME', 3600, 1, 30 * 86_400),
      // GitLab's default: loopback is never banned (a reverse proxy without TRUST_PROXY looks like it)
      ipWhitelist: env.GIT_AUTH_BAN_IP_WHITELIST === undefined ? ['127.0.0.1', '::1', '::ffff:127.0.0.1'] : listEnv(env.GIT_AUTH_BAN_IP_WHITELIST),
    },
    gitSpawnBroker: !/^(false|0|no)$/i.test(env.GIT_SPAWN_BROKER ?? ''),
    gitTransfers: gitTransferLimits(env),
    gitHttpRequestTimeoutMs: intEnv(env, 'GIT_HTTP_REQUEST_TIMEOUT', 60, 1, 3600) * 1000,
    rateLimit: {
      perIp: intEnv(env, 'RATE_LIMIT_PER_IP', 0, 0, 100_000_000),
      perToken: intEnv(env, 'RATE_LIMIT_PER_TOKEN', 0, 0, 100_000_000),
      periodSeconds: intEnv(env, 'RATE_LIMIT_PERIOD', 60, 1, 86_400),
    },
    ssh,
    sshUrlPrefix,
    email: parseEmailConfig(env, externalUrl),
    ldap: parseLdapConfig(env, (msg) => new ConfigError(msg)),
    pages: parsePagesConfig(env, externalUrl, dataDir, (msg) => new ConfigError(msg)),
    lfs: parseLfsConfig(env, dataDir, (msg) => new ConfigError(msg)),
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');
