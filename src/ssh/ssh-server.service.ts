import { createHash } from 'node:crypto';
import type { Server as NetServer, Socket } from 'node:net';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Algorithms, AuthContext, Connection, ServerChannel, Server as SshServer, utils } from 'ssh2';
import sshpk from 'sshpk';
import { NotFound } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { DbNotifications } from '../database/notifications';
import { GitService } from '../git/git.service';
import { transferClient } from '../git/transfer-limiter';
import { GitAccess, GitAccessDenied, GitCaller, GitGrant } from '../git-access/git-access.service';
import { DeployKeysService } from '../deploy-keys/deploy-keys.service';
import { GitAuthBan } from '../throttle/git-auth-ban';
import { sshSessionStarted } from '../metrics/registry';
import { SshKey } from '../users/key.entity';
import { KeysService } from '../users/keys.service';
import { User } from '../users/user.entity';
import { HostKey, loadHostKeys } from './host-keys';
import { paceSendWindow } from './send-window';
import { LfsAuthenticateCommand, parseGitSshCommand, parseLfsAuthenticateCommand } from './ssh-command';
import { LfsTokens } from '../lfs/lfs-tokens';
import { parseProjectRef } from '../common/params/refs';

/** Modern algorithms only: no DSA, no SHA-1 signatures, MACs or key exchange, no CBC. */
const ALGORITHMS: Algorithms = {
  kex: [
    'curve25519-sha256',
    'curve25519-sha256@libssh.org',
    'ecdh-sha2-nistp256',
    'ecdh-sha2-nistp384',
    'ecdh-sha2-nistp521',
    'diffie-hellman-group-exchange-sha256',
    'diffie-hellman-group14-sha256',
    'diffie-hellman-group16-sha512',
    'diffie-hellman-group18-sha512',
  ],
  serverHostKey: ['ssh-ed25519', 'rsa-sha2-512', 'rsa-sha2-256'],
  cipher: ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr', 'aes192-ctr', 'aes256-ctr', 'chacha20-poly1305@openssh.com'],
  hmac: ['hmac-sha2-256-etm@openssh.com', 'hmac-sha2-512-etm@openssh.com', 'hmac-sha2-256', 'hmac-sha2-512'],
  compress: ['none'],
};
const ACCEPTED_KEY_TYPES = new Set(['ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521']);
const MIN_RSA_BITS = 2048;
const NOT_FOUND = 'GitLab: The project you were looking for could not be found.';
/** GitLab 8's answer (`/internal/allowed`) to a command of a blocked user. */
const BLOCKED = 'GitLab: Your account has been blocked.';
const KEY_REMOVED = 'GitLab: The SSH key this connection was opened with has been removed.';
const KEY_DISABLED = 'GitLab: The deploy key this connection was opened with has been disabled on this project.';
/**
 * Notified (database triggers) with a user's id on every change to the user row or to one of its SSH
 * keys, and with `key-<id>` when a deploy key changes, goes, or is disabled on a project.
 */
const AUTH_CHANGED = 'auth_changed';
/** How long a closed connection's client is given to hang up after the disconnect message, before the socket is cut. */
const CLOSE_GRACE_MS = 1000;
/** Session channels open at once on one connection: OpenSSH's `MaxSessions` (10); one more is refused. */
export const MAX_CHANNELS_PER_CONNECTION = 10;

/** The key a connection authenticated with: what every later command re-checks. */
interface AuthenticatedKey {
  id: number;
  fingerprint: string;
  /** The owner of a user's key; null for a deploy key (no user: GitLab 8.17's `key-N` of a DeployKey). */
  userId: number | null;
}

interface Session {
  client: Connection;
  ip: string;
  /** Git transfers running on this connection (a graceful stop waits for them). */
  busy: number;
  /** Set once authenticated. */
  key?: AuthenticatedKey;
  /** Set once its key or its owner lost access: no command runs on it any more. */
  revoked?: boolean;
  /** Set once it is being closed for that. */
  closing?: boolean;
  /** Session channels open now (at most MAX_CHANNELS_PER_CONNECTION). */
  channels: number;
  /** A deploy key's connection: the projects its running commands use (each must stay enabled), with their counts. */
  projects: Map<number, number>;
}

/**
 * Whether the key a connection authenticated with may still act, and as whom (the owner as stored now;
 * none for a deploy key).
 */
type KeyState = { ok: true; owner?: User } | { ok: false; message: string; result: 'blocked' | 'key_removed' | 'key_disabled' };

/** GitLab 8's MD5 fingerprint (`aa:bb:…`) of a public key blob, as the keys API stores it. */
export function md5Fingerprint(blob: Buffer): string {
  return (createHash('md5').update(blob).digest('hex').match(/../g) ?? []).join(':');
}

/**
 * Git over SSH inside the app process (ssh2): public-key authentication against the keys stored
 * through the API (one indexed lookup per attempt, so a deleted key or a blocked user is refused on
 * the very next connection, whichever instance changed it), then only `git-upload-pack`,
 * `git-receive-pack` and `git-upload-archive`, authorised and run through `GitAccess` — the same
 * policy, push rules, write lock and post-push reactions as smart HTTP. No shell, no forwarding.
 *
 * One connection carries many commands (OpenSSH's `ControlMaster` multiplexing), so nothing decided
 * at authentication is trusted later, as GitLab's gitlab-shell asked `/internal/allowed` per command:
 * before every command the key is looked up again (it still exists, with the same id), its owner is
 * read as stored now (blocked or LDAP-blocked: refused; the admin and external flags as they are),
 * and the access is decided by `GitAccess` with that owner — one statement, no cache. And when a
 * user's row or keys change (the `auth_changed` trigger, on every instance), the connections of that
 * user are checked at once: those whose key is gone or whose owner is blocked are closed, running
 * transfers included.
 */
@Injectable()
export class SshServerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server?: SshServer;
  private hostKeys: HostKey[] = [];
  private readonly sessions = new Set<Session>();
  private readonly perIp = new Map<string, number>();
  /** Sockets not authenticated yet, with the timer that cuts them at SSH_AUTH_TIMEOUT. */
  private readonly authTimers = new WeakMap<Socket, NodeJS.Timeout>();
  private boundPort?: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeysService,
    private readonly deployKeys: DeployKeysService,
    private readonly access: GitAccess,
    private readonly git: GitService,
    private readonly ban: GitAuthBan,
    private readonly notifications: DbNotifications,
    private readonly logger: Logger,
    private readonly lfsTokens: LfsTokens,
  ) {}

  /** The port the server listens on (undefined when it is off). */
  get port(): number | undefined {
    return this.boundPort;
  }

  get fingerprints(): { type: string; fingerprint: string; publicKey: string }[] {
    return this.hostKeys.map(({ type, fingerprint, publicKey }) => ({ type, fingerprint, publicKey }));
  }

  async onApplicationBootstrap(): Promise<void> {
    const c = this.config.ssh;
    if (!c.enabled) return;
    this.hostKeys = loadHostKeys(this.config.dataDir, c.hostKeyFiles);
    const server = new SshServer({ hostKeys: this.hostKeys.map((k) => k.privateKey), algorithms: ALGORITHMS, ident: 'GitLab-v3' }, (client, info) =>
      this.onConnection(client, info.ip),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(c.port, c.listen, () => {
          server.removeListener('error', reject);
          resolve();
        });
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EADDRINUSE' ? `port ${c.port} is in use` : code === 'EACCES' ? `port ${c.port} needs privileges` : (e as Error).message;
      if (c.portExplicit) throw new Error(`SSH server: ${why}; set SSH_PORT to a free port, or SSH_ENABLED=false`, { cause: e });
      this.logger.warn('SSH server not started', { reason: why, hint: 'set SSH_PORT to a free port, or SSH_ENABLED=false' });
      return;
    }
    server.on('error', (e: Error) => this.logger.error('SSH server error', { error: e.message }));
    // a blocked user or a removed key: that user's open connections are checked again, on every instance
    await this.notifications.listen(AUTH_CHANGED, this.onAuthChanged);
    server.maxConnections = c.maxSessions;
    // ssh2 reports a connection only once the client has sent its identification line: the limits that
    // must hold before that (per-IP cap, authentication timeout, idle timeout) are kept on the TCP socket
    (server as unknown as { _srv: NetServer })._srv.on('connection', (socket: Socket) => this.onSocket(socket));
    this.server = server;
    const address = (server as unknown as { address(): { port: number } | null }).address();
    this.boundPort = address?.port ?? c.port;
    // with SSH_PORT=0 the URLs show the port the system picked (unless SSH_EXTERNAL_PORT says otherwise)
    if (c.port === 0 && c.externalPort === undefined) {
      this.config.sshUrlPrefix = `ssh://git@${new URL(this.config.externalUrl).hostname}:${this.boundPort}/`;
    }
    this.logger.info('SSH server listening', {
      address: `${c.listen}:${this.boundPort}`,
      host_keys: this.hostKeys.map((k) => `${k.type} ${k.fingerprint}`),
    });
  }

  /** A graceful stop: no new connections; running git transfers get SHUTDOWN_TIMEOUT to finish. */
  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.notifications.unlisten(AUTH_CHANGED, this.onAuthChanged);
    server.close();
    for (const s of this.sessions) if (s.busy === 0) s.client.end();
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    while ([...this.sessions].some((s) => s.busy > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const s of this.sessions) s.client.end();
  }

  /** Every TCP connection, before any SSH byte: the per-IP cap and the two timeouts. No database work. */
  private onSocket(socket: Socket): void {
    const c = this.config.ssh;
    const ip = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const fromIp = this.perIp.get(ip) ?? 0;
    if (!this.server || fromIp >= c.maxSessionsPerIp) {
      sshSessionStarted()('none', 'refused_limit');
      socket.destroy();
      return;
    }
    this.perIp.set(ip, fromIp + 1);
    const timer = setTimeout(() => socket.destroy(), c.authTimeoutMs);
    this.authTimers.set(socket, timer);
    socket.setTimeout(c.idleTimeoutMs, () => socket.destroy());
    socket.once('close', () => {
      clearTimeout(timer);
      const left = (this.perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.perIp.set(ip, left);
      else this.perIp.delete(ip);
    });
  }

  private onConnection(client: Connection, rawIp: string): void {
    const ip = rawIp.replace(/^::ffff:/, '');
    const finish = sshSessionStarted();
    client.on('error', () => undefined);
    const sock = (client as unknown as { _sock: Socket })._sock;
    const session: Session = { client, ip, busy: 0, channels: 0, projects: new Map() };
    this.sessions.add(session);
    let failedAttempt = false;
    let bannedChecked: Promise<boolean> | undefined;
    let command = 'none';
    let result = 'unauthenticated';

    client.on('authentication', (ctx) => {
      // a banned address is refused before any key is looked at (the same per-IP ban as git over HTTP);
      // a key is no guessable secret, so concurrent connections of one host are not rationed up front
      // a ban check the database could not answer is logged; the key lookup that follows still decides
      bannedChecked ??= this.ban.banned(ip).catch((e: unknown) => {
        this.logger.warn('SSH: the git ban could not be checked', { error: e instanceof Error ? e.message : String(e) });
        return false;
      });
      this.authenticate(ctx, bannedChecked).then(
        (owner) => {
          if (owner === 'banned') {
            result = 'banned';
            ctx.reject([]);
            client.end();
            return;
          }
          if (owner === 'query') return;
          if (owner) {
            session.key = { id: owner.key.id, fingerprint: owner.key.fingerprint, userId: owner.owner?.id ?? null };
            ctx.accept();
            void this.ban.succeeded(ip).catch(this.banFailure('succeeded'));
          } else {
            if (ctx.method === 'publickey') failedAttempt = true;
            ctx.reject(['publickey']);
          }
        },
        (e) => {
          this.logger.error('SSH authentication failed with an error', { error: e instanceof Error ? e.message : String(e) });
          ctx.reject(['publickey']);
        },
      );
    });
    client.on('ready', () => {
      clearTimeout(this.authTimers.get(sock));
      result = 'ok';
    });
    // no forwarding of any kind, no global requests
    client.on('tcpip', (_accept, reject) => reject());
    client.on('openssh.streamlocal', (_accept, reject) => reject());
    client.on('request', (_accept, reject) => reject?.());
    client.on('session', (acceptSession, rejectSession) => {
      // as OpenSSH's MaxSessions: one connection cannot multiply its commands without bound
      if (session.channels >= MAX_CHANNELS_PER_CONNECTION) {
        rejectSession();
        return;
      }
      const s = acceptSession();
      session.channels++;
      s.once('close', () => session.channels--);
      let protocol: string | undefined;
      s.on('env', (accept, reject, info) => {
        // only GIT_PROTOCOL (protocol v2), and only what git itself sends
        if (info.key === 'GIT_PROTOCOL' && /^[a-z0-9=:.]{1,64}$/i.test(info.val)) {
          protocol = info.val;
          accept?.();
        } else reject?.();
      });
      s.on('pty', (_a, reject) => reject?.());
      s.on('x11', (_a, reject) => reject?.());
      s.on('auth-agent', (_a, reject) => reject?.());
      s.on('subsystem', (_a, reject) => reject?.());
      s.on('sftp', (_a, reject) => reject?.());
      s.on('shell', (accept) => {
        const ch = accept();
        command = 'shell';
        // `ssh -T git@host`: GitLab's greeting, exit 0 (as the owner is now: a blocked one is refused)
        this.keyState(session)
          .then((state) => {
            if (!state.ok) {
              result = this.revoke(session, ch, state);
              return;
            }
            // a deploy key is no user: gitlab-shell's greeting for it
            ch.write(state.owner ? `Welcome to GitLab, @${state.owner.username}!\n` : 'Welcome to GitLab, Anonymous!\n');
            ch.exit(0);
            ch.end();
          })
          .catch((e: unknown) => {
            this.logger.error('SSH greeting failed', { error: e instanceof Error ? e.message : String(e) });
            ch.stderr.write('GitLab: Internal server error\n');
            ch.exit(1);
            ch.end();
          });
      });
      s.on('exec', (accept, _reject, info) => {
        const ch = accept();
        session.busy++;
        this.exec(session, ch, info.command, protocol)
          .then((r) => {
            command = r.command;
            result = r.result;
          })
          .catch((e: unknown) => this.logger.error('SSH exec failed', { error: e instanceof Error ? e.message : String(e) }))
          .finally(() => {
            session.busy--;
          });
      });
    });
    client.on('close', () => {
      this.sessions.delete(session);
      if (!session.key && failedAttempt) {
        result = 'denied';
        // counted like a failed HTTP Basic authentication: one attempt of the address's budget, then the ban
        void this.ban
          .reserve(ip)
          .then(() => this.ban.failed(ip))
          .catch(this.banFailure('failed'));
      }
      finish(command, result);
    });
  }

  /** The ban's bookkeeping runs beside the connection: a failure of it is logged, never thrown into it. */
  private banFailure(step: string): (e: unknown) => void {
    return (e) => this.logger.warn('SSH: the git ban could not be updated', { step, error: e instanceof Error ? e.message : String(e) });
  }

  /**
   * One authentication attempt: the owner of the offered key when it is acceptable (for a signed
   * attempt: the signature checked against the stored key), `query` when a key without a signature was
   * acceptable (answered here with PK_OK), undefined when refused. A deploy key has no owner.
   */
  private async authenticate(ctx: AuthContext, banned: Promise<boolean>): Promise<{ key: SshKey; owner?: User } | undefined | 'query' | 'banned'> {
    if (await banned) return 'banned';
    if (ctx.method !== 'publickey') return undefined; // no password, no keyboard-interactive
    const algo = ctx.key.algo;
    if (!ACCEPTED_KEY_TYPES.has(algo)) return undefined; // DSA and anything unknown
    if (algo === 'ssh-rsa' && ctx.signature && !ctx.hashAlgo) return undefined; // RSA with SHA-1
    const fingerprint = md5Fingerprint(ctx.key.data);
    const found: { key: SshKey; owner?: User } | null =
      (await this.keys.withOwnerByFingerprint(fingerprint)) ?? (await this.keys.deployKeyByFingerprint(fingerprint).then((key) => key && { key }));
    if (!found || (found.owner && found.owner.state !== 'active')) return undefined;
    const stored = utils.parseKey(found.key.key);
    if (stored instanceof Error || stored.type !== algo || !stored.getPublicSSH().equals(ctx.key.data)) return undefined;
    if (algo === 'ssh-rsa' && sshpk.parseKey(found.key.key, 'ssh').size < MIN_RSA_BITS) return undefined;
    if (!ctx.signature) {
      ctx.accept(); // PK_OK: the client may sign with this key
      return 'query';
    }
    return stored.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true ? found : undefined;
  }

  /**
   * The connection's key as stored now (by its fingerprint, the unique index; the same id as when the
   * connection opened) and its owner's state, read from the database — never from a cache — so a key
   * removed or an owner blocked a moment ago, through any instance, is seen.
   */
  private async keyState(session: Session): Promise<KeyState> {
    const key = session.key;
    if (key && key.userId === null) return this.deployKeyState(session, key);
    const found = key && !session.revoked ? await this.keys.withOwnerByFingerprint(key.fingerprint) : null;
    if (!key || !found || found.key.id !== key.id || found.owner.id !== key.userId) return { ok: false, message: KEY_REMOVED, result: 'key_removed' };
    if (found.owner.state !== 'active') return { ok: false, message: BLOCKED, result: 'blocked' };
    return { ok: true, owner: found.owner };
  }

  /**
   * A deploy key's connection: the key as stored now (the same id), and still enabled on every project
   * its running commands use (disabled on one: the connection is closed, its transfers with it).
   */
  private async deployKeyState(session: Session, key: AuthenticatedKey): Promise<KeyState> {
    const found = session.revoked ? null : await this.keys.deployKeyByFingerprint(key.fingerprint);
    if (!found || found.id !== key.id) return { ok: false, message: KEY_REMOVED, result: 'key_removed' };
    const inUse = [...session.projects.keys()];
    const enabled = await this.deployKeys.enabledOn(key.id, inUse);
    if (inUse.some((id) => !enabled.has(id))) return { ok: false, message: KEY_DISABLED, result: 'key_disabled' };
    return { ok: true };
  }

  /** A command of a connection that lost its access: GitLab's line on stderr, exit 1, and the connection closed. */
  private revoke(session: Session, ch: ServerChannel, state: Extract<KeyState, { ok: false }>): string {
    ch.stderr.write(state.message + '\n');
    ch.exit(1);
    ch.end();
    // no command runs on it any more; it is closed once the client has the line (a multiplexing client
    // relays it to the command's own process), or after the grace period
    session.revoked = true;
    const close = () => this.close(session, state.result);
    ch.once('close', close);
    setTimeout(close, CLOSE_GRACE_MS).unref();
    return state.result;
  }

  /** Closes a connection whose key or owner lost access: a disconnect message, then the socket (running git is killed). */
  private close(session: Session, reason: string): void {
    if (session.closing) return;
    session.revoked = true;
    session.closing = true;
    this.logger.info('SSH connection closed: access revoked', { user_id: session.key?.userId, key_id: session.key?.id, ip: session.ip, reason });
    const sock = (session.client as unknown as { _sock?: Socket })._sock;
    session.client.end();
    setTimeout(() => sock?.destroy(), CLOSE_GRACE_MS).unref();
  }

  /**
   * `auth_changed` (a user row or one of its keys changed, on any instance; empty when the listener
   * was lost and anything may have changed): that user's connections are checked again, and the
   * ones whose key is gone or whose owner is blocked are closed.
   */
  private readonly onAuthChanged = (payload: string): void => {
    const deployKey = /^key-(\d+)$/.exec(payload);
    const userId = Number(payload);
    const all = !deployKey && (payload === '' || !Number.isSafeInteger(userId));
    const concerned = (k: AuthenticatedKey) => all || (deployKey ? k.userId === null && k.id === Number(deployKey[1]) : k.userId === userId);
    for (const session of this.sessions) {
      if (!session.key || session.closing || !concerned(session.key)) continue;
      this.keyState(session).then(
        (state) => {
          if (!state.ok) this.close(session, state.result);
        },
        (e: unknown) => this.logger.warn('SSH: an open connection could not be checked again', { error: e instanceof Error ? e.message : String(e) }),
      );
    }
  };

  private async exec(session: Session, ch: ServerChannel, raw: string, protocol: string | undefined): Promise<{ command: string; result: string }> {
    const ip = session.ip;
    const refuse = (message: string, command: string, result: string) => {
      ch.stderr.write(message + '\n');
      ch.exit(1);
      ch.end();
      return { command, result };
    };
    const lfs = parseLfsAuthenticateCommand(raw);
    if (lfs) return this.lfsAuthenticate(session, ch, lfs, refuse);
    const cmd = parseGitSshCommand(raw);
    if (!cmd) return refuse('GitLab: Disallowed command', 'disallowed', 'refused');
    let grant: GitGrant;
    let caller: GitCaller;
    try {
      // every command, as gitlab-shell's /allowed: the key and its owner as they are now, then the access as that owner
      // (a deploy key: as itself, on the projects it is enabled on)
      const state = await this.keyState(session);
      if (!state.ok) return { command: cmd.service, result: this.revoke(session, ch, state) };
      caller = state.owner ? { user: state.owner } : { deployKey: { id: session.key!.id } };
      grant = await this.access.authorize(caller, parseProjectRef(cmd.path), cmd.service);
    } catch (e) {
      if (e instanceof NotFound) return refuse(NOT_FOUND, cmd.service, 'not_found');
      if (e instanceof GitAccessDenied) return refuse(`GitLab: ${e.message}`, cmd.service, 'forbidden');
      this.logger.error('SSH git command failed', { key_id: session.key?.id, command: cmd.service, error: e instanceof Error ? e.message : String(e) });
      return refuse('GitLab: Internal server error', cmd.service, 'error');
    }
    if (!paceSendWindow(ch)) this.logger.warn('SSH send pacing is off: ssh2 channel without outgoing.window');
    const started = Date.now();
    const user = caller.user;
    const who = user ? user.username : `key-${session.key!.id}`;
    const projectId = grant.project.id;
    // a deploy key's transfer holds its project: disabling the key there closes the connection
    if (caller.deployKey) session.projects.set(projectId, (session.projects.get(projectId) ?? 0) + 1);
    let code: number;
    try {
      const client = transferClient(user ? { userId: user.id } : { deployKeyId: session.key!.id });
      code = await this.access.run(
        grant,
        caller,
        'ssh',
        (onUpdates, lock) =>
          this.git.serveSsh(grant.repository, {
            service: cmd.service,
            protocol,
            stdin: ch,
            stdout: ch,
            stderr: ch.stderr,
            pushRules: grant.pushRules,
            onUpdates,
            onAbort: (kill) => ch.once('close', kill),
            client,
            requestTimeoutMs: this.config.ssh.requestTimeoutMs,
            beforeWork: lock,
          }),
        // a push takes its repository's lock once the client has sent its ref updates, not while it sends nothing
        { lockOnRequest: true },
      );
    } catch (e) {
      this.logger.error('SSH git command failed', { user: who, command: cmd.service, error: e instanceof Error ? e.message : String(e) });
      return refuse('GitLab: Internal server error', cmd.service, 'error');
    } finally {
      if (caller.deployKey) {
        const left = (session.projects.get(projectId) ?? 1) - 1;
        if (left > 0) session.projects.set(projectId, left);
        else session.projects.delete(projectId);
      }
    }
    this.logger.info('ssh git', { user: who, ip, command: cmd.service, project: cmd.path, exit: code, duration_ms: Date.now() - started });
    ch.exit(code);
    ch.end();
    return { command: cmd.service, result: code === 0 ? 'ok' : 'git_failed' };
  }
  /**
   * `git-lfs-authenticate <path> download|upload` (gitlab-shell's GitlabLfsAuthentication with GitLab
   * 8.17's /internal/lfs_authenticate): the key checked as for a git command, the access as for a fetch
   * (download) or a push (upload), then one JSON line with the HTTP Basic header of a short-lived LFS
   * token (8.17's Gitlab::LfsToken: the username, or `lfs+deploy-key-<id>`) and the repository's LFS href.
   */
  private async lfsAuthenticate(
    session: Session,
    ch: ServerChannel,
    lfs: LfsAuthenticateCommand,
    refuse: (message: string, command: string, result: string) => { command: string; result: string },
  ): Promise<{ command: string; result: string }> {
    const command = 'git-lfs-authenticate';
    let caller: GitCaller;
    try {
      const state = await this.keyState(session);
      if (!state.ok) return { command, result: this.revoke(session, ch, state) };
      caller = state.owner ? { user: state.owner } : { deployKey: { id: session.key!.id } };
      await this.access.authorize(caller, parseProjectRef(lfs.path), lfs.operation === 'upload' ? 'git-receive-pack' : 'git-upload-pack');
    } catch (e) {
      if (e instanceof NotFound) return refuse(NOT_FOUND, command, 'not_found');
      if (e instanceof GitAccessDenied) return refuse(`GitLab: ${e.message}`, command, 'forbidden');
      this.logger.error('SSH git-lfs-authenticate failed', { key_id: session.key?.id, error: e instanceof Error ? e.message : String(e) });
      return refuse('GitLab: Internal server error', command, 'error');
    }
    const token = this.lfsTokens.issue(caller.user ? { userId: caller.user.id } : { deployKeyId: session.key!.id }, caller.user?.username);
    const payload = {
      header: { Authorization: `Basic ${Buffer.from(`${token.login}:${token.token}`).toString('base64')}` },
      href: `${this.config.externalUrl}/${lfs.path}.git/info/lfs/`,
    };
    ch.write(JSON.stringify(payload) + '\n');
    ch.exit(0);
    ch.end();
    return { command, result: 'ok' };
  }
}
