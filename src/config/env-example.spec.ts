import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config';

/**
 * `.env.example` lists every setting the code reads, and nothing else: the settings are the names
 * the config loader (src/config) reads from its `env` and the `process.env` reads anywhere in src/.
 * The README's settings table names only listed settings.
 */
const ROOT = join(__dirname, '..', '..');

/** process.env reads that are no deploy setting. */
const NOT_SETTINGS: Record<string, string> = {
  PATH: 'passed on to the git processes',
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

const NAME = '[A-Z][A-Z0-9_]+';
/** `env.X`, `env['X']`, `intEnv(env, 'X', …)` in the config loader. */
const CONFIG_READ = new RegExp(`\\benv(?:\\.(${NAME})|\\[['"](${NAME})['"]\\])|\\w+Env\\(\\s*env,\\s*['"](${NAME})['"]`, 'g');
const PROCESS_ENV_READ = new RegExp(`process\\.env(?:\\.(${NAME})|\\[['"](${NAME})['"]\\])`, 'g');

function readByCode(): Set<string> {
  const keys = new Set<string>();
  const add = (m: RegExpMatchArray) => {
    const key = m.slice(1).find(Boolean)!;
    if (!(key in NOT_SETTINGS)) keys.add(key);
  };
  for (const file of sources(join(ROOT, 'src', 'config'))) for (const m of readFileSync(file, 'utf8').matchAll(CONFIG_READ)) add(m);
  for (const file of sources(join(ROOT, 'src'))) for (const m of readFileSync(file, 'utf8').matchAll(PROCESS_ENV_READ)) add(m);
  return keys;
}

/** `KEY=value` and commented-out `# KEY=value` lines. */
function listedInEnvExample(): Set<string> {
  const text = readFileSync(join(ROOT, '.env.example'), 'utf8');
  return new Set([...text.matchAll(new RegExp(`^#?\\s*(${NAME})=`, 'gm'))].map((m) => m[1]));
}

/** The variables of the README's "Production settings" table (first column, `A` / `B` alike). */
function namedInReadmeTable(): Set<string> {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = text.slice(text.indexOf('## Production settings'));
  const rows = table.split('\n').filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1].matchAll(new RegExp(`\`(${NAME})\``, 'g'))].map((m) => m[1])));
}

/** The keys `loadConfig` reads at run time with `env` (a recording proxy). */
function readAtRunTime(env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const proxy = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return target[key as string];
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return key in target;
    },
  });
  loadConfig(proxy);
  return read;
}

describe('.env.example', () => {
  const code = readByCode();
  const listed = listedInEnvExample();

  it('finds the settings (the scan is not empty)', () => {
    expect(code.size).toBeGreaterThan(60);
    expect(code).toContain('DATABASE_URL');
    expect(code).toContain('GIT_AUTH_BAN_MAX_RETRY'); // intEnv(env, '…')
    expect(code).toContain('GIT_REVISION'); // process.env outside src/config
  });

  it('lists every setting the code reads', () => {
    expect([...code].filter((k) => !listed.has(k)).sort()).toEqual([]);
  });

  it('lists nothing the code does not read', () => {
    expect([...listed].filter((k) => !code.has(k)).sort()).toEqual([]);
  });

  it("lists every setting of the README's settings table", () => {
    const named = namedInReadmeTable();
    expect(named.size).toBeGreaterThan(20);
    expect([...named].filter((k) => !listed.has(k)).sort()).toEqual([]);
  });

  it('the scan sees every key the loader reads at run time (SMTP and LDAP on, too)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'env-example-'));
    try {
      const base = { DATA_DIR: dataDir, SECRET_KEY: 'x'.repeat(40) };
      const read = new Set([
        ...readAtRunTime(base),
        ...readAtRunTime({ ...base, SMTP_URL: 'smtp://mail.example.com:587' }),
        ...readAtRunTime({ ...base, LDAP_URL: 'ldap://ldap.example.com', LDAP_BASE: 'dc=example,dc=com' }),
        ...readAtRunTime({ ...base, LDAP_HOST: 'ldap.example.com', LDAP_BASE: 'dc=example,dc=com' }),
      ]);
      const settings = [...read].filter((k) => /^[A-Z][A-Z0-9_]+$/.test(k));
      expect(settings.length).toBeGreaterThan(40);
      expect(settings.filter((k) => !code.has(k)).sort()).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
