import 'reflect-metadata';
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { backup, restore, RestoreRefused } from './admin/backup';
import { adminCommands } from './admin/users-admin';
import { AppConfig, ConfigError, loadConfig } from './config/config';
import { pagesDomainConflict } from './config/pages-config';
import { DataFolderInUse } from './database/data-folder-lock';
import { Database, openDatabase } from './database/data-source';
import { setLockRole } from './database/embedded-postgres';
import { MIGRATIONS } from './database/migrations';
import { loadHostKeys } from './ssh/host-keys';
import { GitRunner } from './git/git-runner';
import { checkLdapServers } from './ldap/ldap-directory';
import { Mailer } from './notifications/mailer';
import { buildMail } from './notifications/notification-mails';

/**
 * The admin CLI: `node dist/cli.js <command>` (or `npm run cli -- <command>`).
 *
 *   migrate                                   apply pending migrations
 *   check                                     database, migrations, DATA_DIR, git, secret key, SSH host keys, LDAP servers, SMTP, Pages (exit 0/1)
 *   send-test-email --to ADDRESS              one mail through SMTP_URL, now (exit 0/1)
 *   create-admin --username U --email E [--password P]
 *   reset-password --username U [--password P]
 *   backup --file F.tar.gz                    database + repositories + artifacts/uploads + secret key
 *   restore --file F.tar.gz [--force]         into an empty database and DATA_DIR (or replace with --force)
 *
 * It reads the same environment as the server (DATABASE_URL, DATA_DIR ...). On the embedded default
 * the server must be stopped: PGlite is a single-process database, which the CLI then opens itself;
 * while a server (or another command) holds the data folder, every command refuses (DataFolderInUse)
 * but `check`, which asks a running server for the database (its /-/readiness, where its lock says it
 * listens) and runs the checks that need no database.
 */
const USAGE = `usage: cli <migrate|check|create-admin|reset-password|backup|restore|send-test-email> [options]
  send-test-email --to ADDRESS
  create-admin --username U --email E [--password P]
  reset-password --username U [--password P]
  backup --file F.tar.gz
  restore --file F.tar.gz [--force]`;

export function parseArgs(argv: string[]): { command: string; opts: Record<string, string | true> } {
  const [command = '', ...rest] = argv;
  const opts: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument: ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) opts[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < rest.length && !rest[i + 1].startsWith('--')) opts[a.slice(2)] = rest[++i];
    else opts[a.slice(2)] = true;
  }
  return { command, opts };
}

class UsageError extends Error {}

function str(opts: Record<string, string | true>, name: string, required = true): string | undefined {
  const v = opts[name];
  if (v === undefined || v === true) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  return v;
}

const out = (line: string) => process.stdout.write(line + '\n');

async function withDb<T>(config: AppConfig, migrate: boolean, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { migrate });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

type CheckLine = (name: string, result: string | null, note?: string) => void;

/**
 * The database and migrations lines while a server holds the embedded data folder (the README has
 * `check` run beside `npm start`): the database is that server's, so ask it — its lock names its pid,
 * where it listens and the last migration of its build — and its `/-/readiness` answers for the database.
 */
async function checkRunningServer(inUse: DataFolderInUse, line: CheckLine): Promise<void> {
  const { holder } = inUse;
  const who = `the running server (pid ${holder.pid ?? '?'})`;
  if (!holder.listening) {
    line('database', `${inUse.message} (it does not listen yet: starting?)`);
    line('migrations', 'not checked (the database is in use)');
    return;
  }
  const { host, port } = holder.listening;
  const local = host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const url = `http://${local.includes(':') ? `[${local}]` : local}:${port}/-/readiness`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const body = (await res.text()).slice(0, 300);
    if (res.status === 200) line('database', null, `in use by ${who}, which answers ready on ${url}`);
    else line('database', `in use by ${who}, which answers ${res.status} on ${url}: ${body}`);
  } catch (e) {
    // fetch's "fetch failed" says nothing: its cause does (ECONNREFUSED ...); a timeout is its own message
    const err = e as { message?: string; cause?: { code?: string; message?: string } } | undefined;
    const cause = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
    line('database', `in use by ${who}, which does not answer on ${url} (${cause})`);
  }
  const ours = MIGRATIONS.map((m) => m.name);
  const at = holder.migration ? ours.indexOf(holder.migration) : -1;
  if (at === ours.length - 1) line('migrations', null, 'applied by the running server at its start');
  else if (at >= 0) {
    const pending = ours.slice(at + 1);
    line('migrations', `${pending.length} of this build not applied by the running server (${pending.join(', ')}): restart it, it applies them at start`);
  } else line('migrations', `the running server was built with other migrations (its last: ${holder.migration ?? 'unknown'}): rebuild, or restart it`);
}

/** `check`: one line per check, `ok` or `FAILED: why`; true when all pass. */
export async function runChecks(config: AppConfig): Promise<boolean> {
  let ok = true;
  const line: CheckLine = (name, result, note) => {
    if (result !== null) ok = false;
    out(`${name}: ${result === null ? `ok${note ? ` (${note})` : ''}` : `FAILED: ${result}`}`);
  };
  let db: Database | undefined;
  try {
    db = await openDatabase(config, { migrate: false });
    await db.dataSource.query('SELECT 1');
    line('database', null);
    const applied = await db.dataSource.query<{ name: string }[]>(`SELECT name FROM schema_migrations`).catch(() => [] as { name: string }[]);
    const done = new Set(applied.map((r) => r.name));
    const pending = MIGRATIONS.filter((m) => !done.has(m.name)).map((m) => m.name);
    line('migrations', pending.length ? `${pending.length} pending (${pending.join(', ')}); run: cli migrate` : null);
  } catch (e) {
    if (e instanceof DataFolderInUse && e.holder.role === 'server') await checkRunningServer(e, line);
    else {
      // another command holding the embedded data folder: the same one-line refusal; the checks that
      // need no database still run (e.g. the SSH host key fingerprints)
      line('database', e instanceof Error ? e.message : String(e));
      line('migrations', e instanceof DataFolderInUse ? 'not checked (the database is in use)' : 'database unreachable');
    }
  } finally {
    await db?.close().catch(() => undefined);
  }
  try {
    await access(config.dataDir, constants.W_OK);
    const probe = await mkdtemp(join(config.dataDir, '.check-'));
    await rm(probe, { recursive: true });
    line('data_dir', null);
  } catch (e) {
    line('data_dir', `${config.dataDir} is not writable (${e instanceof Error ? e.message : String(e)})`);
  }
  try {
    const runner = new GitRunner(join(config.dataDir, 'git-home'));
    const v = (await runner.run(['--version'])).stdout.toString().trim();
    const m = /(\d+)\.(\d+)/.exec(v);
    const good = !!m && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 38));
    line('git', good ? null : `${v} is older than 2.38`);
  } catch (e) {
    line('git', e instanceof Error ? e.message : String(e));
  }
  line('secret_key', config.secretKey.length >= 32 ? null : 'shorter than 32 characters');
  if (!config.ssh.enabled) out('ssh: off (SSH_ENABLED=false)');
  else {
    try {
      // the host keys the server presents (generated into DATA_DIR on first use, as the server does)
      const keys = loadHostKeys(config.dataDir, config.ssh.hostKeyFiles);
      line('ssh_host_keys', null);
      for (const k of keys) out(`  ${k.type} ${k.fingerprint}`);
    } catch (e) {
      line('ssh_host_keys', e instanceof Error ? e.message : String(e));
    }
  }
  // each LDAP server: connect (with its TLS), bind as the service account
  if (!config.ldap.servers.length) out('ldap: off (no LDAP_SERVERS or LDAP_URL)');
  for (const r of await checkLdapServers(config.ldap.servers)) line(`ldap ${r.provider} (${r.url})`, r.result);
  // GitLab Pages: on a host of its own, never the API's origin (loadConfig refuses that too)
  if (!config.pages.domain) out('pages: off (PAGES_DOMAIN is not set)');
  else {
    const sites = `sites at ${config.pages.url!.replace('://', '://<namespace>.')}/<project>/`;
    line('pages', pagesDomainConflict(config.pages.domain, config.externalUrl), sites);
  }
  // the SMTP server: connect, EHLO, STARTTLS when offered, authenticate
  if (!config.email) out('smtp: off (SMTP_URL is not set: no email notifications)');
  else {
    const mailer = new Mailer(config.email);
    try {
      await mailer.verify();
      line(`smtp (${config.email.smtpUrl})`, null);
    } catch (e) {
      line(`smtp (${config.email.smtpUrl})`, e instanceof Error ? e.message : String(e));
    } finally {
      mailer.close();
    }
  }
  return ok;
}

/** `send-test-email --to ADDRESS`: one mail now, through SMTP_URL; says whether the server accepted it. */
async function sendTestEmail(config: AppConfig, to: string): Promise<number> {
  if (!config.email) {
    process.stderr.write('SMTP_URL is not set: email is off\n');
    return 1;
  }
  const mailer = new Mailer(config.email);
  try {
    await mailer.send(buildMail({ kind: 'test' }, to, { externalUrl: config.externalUrl, subjectPrefix: config.email.subjectPrefix }, `test-${Date.now()}`));
    out(`test email sent to ${to} through ${config.email.smtpUrl}`);
    return 0;
  } catch (e) {
    process.stderr.write(`test email not sent: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    mailer.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const { command, opts } = parseArgs(argv);
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (e) {
    // `check` reports a setting the server would refuse to boot with as its failed check
    if (command !== 'check' || !(e instanceof ConfigError)) throw e;
    out(`config: FAILED: ${e.message}`);
    return 1;
  }
  setLockRole(`cli ${command}`);
  switch (command) {
    case 'migrate':
      return withDb(config, false, async (db) => {
        const applied = await db.dataSource.runMigrations({ transaction: 'each' });
        out(`${applied.length} migration(s) applied`);
        return 0;
      });
    case 'check':
      return (await runChecks(config)) ? 0 : 1;
    case 'create-admin':
    case 'reset-password':
      return adminCommands(config, command, {
        username: str(opts, 'username')!,
        email: command === 'create-admin' ? str(opts, 'email') : undefined,
        password: str(opts, 'password', false),
      });
    case 'backup': {
      const file = str(opts, 'file')!;
      return withDb(config, false, async (db) => {
        const r = await backup(config, db.dataSource, file);
        out(`backup written to ${r.file}: ${r.tables} tables, ${r.rows} rows, ${r.repositories} repositories`);
        out(
          `mode ${r.mode.toString(8).padStart(4, '0')} (its owner only, from its creation): it holds the secret key, the SSH host private keys ` +
            'and the password hashes; keep it as private as DATA_DIR',
        );
        return 0;
      });
    }
    case 'restore': {
      const file = str(opts, 'file')!;
      return withDb(config, false, async (db) => {
        const r = await restore(config, db.dataSource, file, { force: opts.force === true });
        out(`restored from ${file}:`);
        out(`  copied: ${r.tables} tables, ${r.rows} rows`);
        for (const d of r.derived) {
          out(`  rebuilt from the copied rows, not copied: ${d.name} (${d.rows} rows now; ${d.inBackup} in the backup)`);
        }
        out(`  not copied: schema_migrations (this version's migrations made the schema; the backup had ${r.migrations} applied)`);
        out(`  repositories: ${r.repositories}`);
        return 0;
      });
    }
    case 'send-test-email':
      return sendTestEmail(config, str(opts, 'to')!);
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      if (e instanceof UsageError) process.stderr.write(`${e.message}\n${USAGE}\n`);
      else if (e instanceof RestoreRefused || e instanceof DataFolderInUse) process.stderr.write(`${e.message}\n`);
      else process.stderr.write(`failed: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(e instanceof UsageError ? 2 : 1);
    },
  );
}
