'use strict';
/**
 * What both bare baselines (bench/bare-server.js, bench/ci-bare-server.js) set up the way the app
 * does: the keys derived from SECRET_KEY (token digest, token encryption), the listen address, the
 * external URL and a `pg` Pool of the app's size.
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10).
 */
const { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } = require('node:crypto');
const http = require('node:http');
const { Pool } = require('pg');

function bareSetup(defaultPort) {
  const SECRET_KEY = process.env.SECRET_KEY;
  if (!SECRET_KEY || SECRET_KEY.length < 32) throw new Error('SECRET_KEY (>= 32 chars) is required');
  const secret = Buffer.from(SECRET_KEY, 'utf8');
  const digestKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-digest', 32));
  const encryptionKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-encryption', 32));
  const PORT = Number(process.env.PORT || defaultPort);
  const HOST = process.env.HOST || '127.0.0.1';
  const EXTERNAL_URL = (process.env.EXTERNAL_URL || `http://localhost:${PORT}`).replace(/\/+$/, '');
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE || 10) });

  /** The HMAC digest a token is looked up by. */
  const digest = (token) => createHmac('sha256', digestKey).update(token, 'utf8').digest('hex');

  /** `v1:iv:tag:data` (AES-256-GCM), as SecretsService.encrypt. */
  function encrypt(plain) {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', encryptionKey, iv);
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  }

  function decrypt(sealed) {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1') throw new Error('unknown encryption version');
    const d = createDecipheriv('aes-256-gcm', encryptionKey, Buffer.from(iv, 'base64'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(data, 'base64')), d.final()]).toString('utf8');
  }

  // Application settings, cached for 5 s like ApplicationSettingsService.
  let settings;
  async function gravatarEnabled() {
    if (settings && Date.now() - settings.at < 5000) return settings.gravatar;
    const { rows } = await pool.query('SELECT gravatar_enabled FROM application_settings ORDER BY id ASC LIMIT 1');
    settings = { gravatar: rows.length ? rows[0].gravatar_enabled : true, at: Date.now() };
    return settings.gravatar;
  }

  /** Serves `handle(req, res)` (a 500 on a throw), prints the listening line, stops on SIGTERM/SIGINT. */
  function serve(name, handle, send) {
    const server = http.createServer((req, res) => {
      handle(req, res).catch((e) => {
        process.stderr.write(`${name}: ${e && e.stack ? e.stack : e}\n`);
        if (!res.headersSent) send(res, 500, { message: '500 Internal Server Error' });
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 65_000;
    server.listen(PORT, HOST, () => {
      process.stdout.write(JSON.stringify({ level: 'info', msg: 'listening', address: `${HOST}:${PORT}` }) + '\n');
    });
    const stop = () => {
      server.close();
      server.closeAllConnections?.();
      pool.end().finally(() => process.exit(0));
      setTimeout(() => process.exit(0), 2000).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return server;
  }

  return { PORT, HOST, EXTERNAL_URL, pool, digest, encrypt, decrypt, gravatarEnabled, serve };
}

/** page/per_page as the app reads them (src/common/pagination/pagination.ts). */
function pageRequest(query) {
  const read = (name) => {
    const all = query.getAll(name);
    const s = all.length ? all[all.length - 1].trim() : undefined;
    return s !== undefined && /^\d{1,9}$/.test(s) ? Number(s) : undefined;
  };
  const page = Math.max(1, read('page') ?? 1);
  let perPage = read('per_page') ?? 20;
  if (perPage < 1) perPage = 20;
  perPage = Math.min(perPage, 100);
  return { page, perPage, offset: (page - 1) * perPage };
}

const CREDENTIAL_PARAMS = new Set(['private_token', 'access_token', 'bearer_token']);
const encode = (s) => encodeURIComponent(s).replace(/%20/g, '+');

/** The app's pagination headers (src/common/pagination/pagination.ts), for scalar query values. */
function paginationHeaders(externalUrl, path, query, total, page) {
  const totalPages = Math.ceil(total / page.perPage);
  const base = {};
  for (const [k, v] of query) {
    const key = k.endsWith('[]') ? k.slice(0, -2) : k;
    if (!CREDENTIAL_PARAMS.has(key)) base[key] = v;
  }
  const url = (p) => {
    const params = { ...base, page: String(p), per_page: String(page.perPage) };
    const qs = Object.keys(params)
      .sort()
      .map((k) => `${encode(k)}=${encode(String(params[k]))}`)
      .join('&');
    return `${externalUrl}${path}?${qs}`;
  };
  const links = [];
  if (page.page > 1) links.push(`<${url(page.page - 1)}>; rel="prev"`);
  if (page.page < totalPages) links.push(`<${url(page.page + 1)}>; rel="next"`);
  links.push(`<${url(1)}>; rel="first"`);
  links.push(`<${url(totalPages)}>; rel="last"`);
  return {
    Link: links.join(', '),
    'X-Total': String(total),
    'X-Total-Pages': String(totalPages),
    'X-Per-Page': String(page.perPage),
    'X-Page': String(page.page),
    'X-Next-Page': page.page < totalPages ? String(page.page + 1) : '',
    'X-Prev-Page': page.page > 1 ? String(page.page - 1) : '',
  };
}

module.exports = { bareSetup, pageRequest, paginationHeaders };
