'use strict';
/**
 * What both bare baselines (bench/bare-server.js, bench/ci-bare-server.js) set up the way the app
 * does: the keys derived from SECRET_KEY (token digest, token encryption), the listen address, the
 * external URL and a `pg` Pool of the app's size.
 *
 * Env: DATABASE_URL, PORT, HOST, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE (default 10).
 */
const { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } = require('node:crypto');
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

  return { PORT, HOST, EXTERNAL_URL, pool, digest, encrypt, decrypt };
}

module.exports = { bareSetup };
