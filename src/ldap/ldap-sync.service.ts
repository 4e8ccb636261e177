import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { LdapServerConfig } from '../config/ldap-config';
import { ldapSynced } from '../metrics/registry';
import { QueueService } from '../queue/queue.service';
import { UserDirectory } from '../users/user-directory.service';
import { DirectoryUnavailable, LdapConnection } from './ldap-directory';
import { LdapService } from './ldap.service';

export const LDAP_SYNC_QUEUE = 'ldap.sync';
/** Identities read (and entries looked up) per step: memory stays bounded whatever the directory's size. */
export const LDAP_SYNC_PAGE = 500;
/** Directory lookups in flight at once on the one connection of a run. */
const LOOKUPS_IN_FLIGHT = 16;

export interface LdapSyncResult {
  provider: string;
  checked: number;
  blocked: number;
  unblocked: number;
  /** Lookups the directory answered with an error other than "no such entry": left as they were. */
  unknown: number;
  /** The directory stopped answering: the run ended there, nobody was blocked for it. */
  unavailable: boolean;
}

/**
 * GitLab's LDAP access check as a periodic job (pg-boss, one run per slot across every instance,
 * every LDAP_SYNC_INTERVAL seconds): each LDAP user whose entry is gone, no longer matches the
 * filter or is disabled in Active Directory becomes `ldap_blocked`; an `ldap_blocked` one whose
 * entry is back becomes `active`. A state change fires the users row's `auth_changed` notification:
 * every instance drops the user's cached tokens at once. A directory that does not answer blocks
 * nobody: the run stops for that server, logged and counted (`ldap_unavailable_total`).
 *
 * The users are read page by page (keyset on the identity id) and looked up by DN in the directory
 * (a base-scope search each, pipelined on one connection), so neither the directory's entries nor
 * the users are ever all in memory; each page costs one SELECT and at most two UPDATEs.
 */
@Injectable()
export class LdapSyncService implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UserDirectory,
    private readonly queue: QueueService,
    private readonly ldap: LdapService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    if (!this.config.ldap.servers.length) return;
    this.queue
      .every(
        LDAP_SYNC_QUEUE,
        this.config.ldap.syncIntervalSeconds,
        async () => {
          await this.syncAll();
        },
        { expireInSeconds: 3600 },
      )
      .catch((e) => this.logger.error('LDAP synchronisation: queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  async syncAll(): Promise<LdapSyncResult[]> {
    const results: LdapSyncResult[] = [];
    for (const server of this.config.ldap.servers) results.push(await this.sync(server));
    for (const r of results) this.logger.info('LDAP synchronisation', { ...r });
    return results;
  }

  private async sync(server: LdapServerConfig): Promise<LdapSyncResult> {
    const result: LdapSyncResult = { provider: server.provider, checked: 0, blocked: 0, unblocked: 0, unknown: 0, unavailable: false };
    let conn: LdapConnection | undefined;
    try {
      conn = await LdapConnection.open(server);
      for (let after = 0; ;) {
        const page = await this.users.identitiesPage(server.provider, after, LDAP_SYNC_PAGE);
        if (page.length === 0) break;
        after = page[page.length - 1].id;
        // every lookup of the page first: a directory that fails half-way changes nothing of the page
        const c = conn;
        const found = await mapLimit(page, LOOKUPS_IN_FLIGHT, async (row): Promise<'present' | 'gone' | 'unknown'> => {
          try {
            const person = await c.findByDn(row.externUid);
            return person && !person.disabled ? 'present' : 'gone';
          } catch (e) {
            if (e instanceof DirectoryUnavailable) throw e;
            return 'unknown';
          }
        });
        const gone = page.filter((row, i) => found[i] === 'gone' && row.state === 'active').map((r) => r.userId);
        const back = page.filter((row, i) => found[i] === 'present' && row.state === 'ldap_blocked').map((r) => r.userId);
        const blocked = await this.users.moveState(gone, 'active', 'ldap_blocked');
        const unblocked = await this.users.moveState(back, 'ldap_blocked', 'active');
        const unknown = found.filter((f) => f === 'unknown').length;
        result.checked += page.length;
        result.blocked += blocked.length;
        result.unblocked += unblocked.length;
        result.unknown += unknown;
        ldapSynced(server.provider, 'present', found.filter((f) => f === 'present').length);
        ldapSynced(server.provider, 'blocked', blocked.length);
        ldapSynced(server.provider, 'unblocked', unblocked.length);
        ldapSynced(server.provider, 'unknown', unknown);
        if (page.length < LDAP_SYNC_PAGE) break;
      }
    } catch (e) {
      if (!(e instanceof DirectoryUnavailable)) throw e;
      result.unavailable = true;
      this.ldap.unavailable(e, 'sync');
    } finally {
      await conn?.close();
    }
    return result;
  }
}

/** `fn` over `items` with at most `limit` in flight; results in the items' order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
