import { isIP } from 'node:net';
import { join } from 'node:path';

/**
 * GitLab Pages (CE 8.17's `pages` section of gitlab.yml): sites are served for host names under
 * `domain` (`<namespace>.<domain>`), never on the API's own host. Off (no serving, no deploying) when
 * PAGES_DOMAIN is unset, as 8.17's `pages.enabled: false`.
 */
export interface PagesConfig {
  /** PAGES_DOMAIN, lower case, without a trailing dot; null: Pages are off. */
  domain: string | null;
  /** Scheme and port of the sites' URLs (PAGES_URL, default `http://<domain>`), without a trailing slash. */
  url: string | null;
  /** Where the sites are kept: `<DATA_DIR>/pages/<project id>/public` (in backups with the rest of DATA_DIR). */
  dir: string;
  /** Where a deploy extracts before its rename into place (skipped by backups: it starts with a dot). */
  tmpDir: string;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Whether `name` is a DNS name of at least two labels (letters, digits, hyphens), lower case. */
function isDomainName(name: string): boolean {
  if (name.length > 253 || isIP(name)) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

/**
 * Why `domain` would put user content on the API's origin (or a parent of it), or null when it does
 * not: the external URL's host must be neither PAGES_DOMAIN nor any name under it (`<namespace>.<domain>`
 * is a site, whose scripts must not share the API's origin or its cookies' scope).
 */
export function pagesDomainConflict(domain: string, externalUrl: string): string | null {
  const apiHost = new URL(externalUrl).hostname.toLowerCase().replace(/\.$/, '');
  if (apiHost === domain || apiHost.endsWith(`.${domain}`)) {
    return `PAGES_DOMAIN (${domain}) must not be the host of EXTERNAL_URL (${apiHost}) nor a parent domain of it: Pages sites would run on the API's origin`;
  }
  return null;
}

/** PAGES_DOMAIN and PAGES_URL, checked; `fail` makes the error the caller throws. */
export function parsePagesConfig(env: NodeJS.ProcessEnv, externalUrl: string, dataDir: string, fail: (msg: string) => Error): PagesConfig {
  const dir = join(dataDir, 'pages');
  const tmpDir = join(dataDir, '.pages-tmp');
  const raw = (env.PAGES_DOMAIN ?? '').trim().toLowerCase().replace(/\.$/, '');
  const rawUrl = (env.PAGES_URL ?? '').trim().replace(/\/+$/, '');
  if (!raw) {
    if (rawUrl) throw fail('PAGES_URL is set but PAGES_DOMAIN is not: set PAGES_DOMAIN to serve Pages');
    return { domain: null, url: null, dir, tmpDir };
  }
  if (!isDomainName(raw)) throw fail(`PAGES_DOMAIN must be a domain name such as pages.example.com, got "${raw}"`);
  const conflict = pagesDomainConflict(raw, externalUrl);
  if (conflict) throw fail(conflict);
  let url = `http://${raw}`;
  if (rawUrl) {
    let u: URL;
    try {
      u = new URL(rawUrl);
    } catch {
      throw fail(`PAGES_URL must be an http(s) URL, got "${rawUrl}"`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.pathname !== '/' || u.search || u.hash) {
      throw fail(`PAGES_URL must be an http(s) URL of PAGES_DOMAIN without a path, got "${rawUrl}"`);
    }
    if (u.hostname.toLowerCase() !== raw) throw fail(`PAGES_URL's host (${u.hostname}) must be PAGES_DOMAIN (${raw})`);
    url = `${u.protocol}//${raw}${u.port ? `:${u.port}` : ''}`;
  }
  return { domain: raw, url, dir, tmpDir };
}

/**
 * A project's site URL, as 8.17's `Project#pages_url`: `<scheme>://<namespace>.<domain>/<project>`,
 * or the bare host for the project named `<namespace>.<domain>` (its namespace's own site); the host in
 * lower case, the project's path as it is.
 */
export function pagesUrl(pages: PagesConfig, namespacePath: string, projectPath: string): string | null {
  if (!pages.domain || !pages.url) return null;
  const host = `${namespacePath}.${pages.domain}`.toLowerCase();
  const base = pages.url.replace(/^(https?:\/\/)/, `$1${namespacePath.toLowerCase()}.`);
  return host === projectPath ? base : `${base}/${projectPath}`;
}
