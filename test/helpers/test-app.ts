import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../../src/app.factory';
import { ApplicationSettingsService } from '../../src/application-settings/application-settings.service';
import { AuthService } from '../../src/auth/auth.service';
import { AppConfig, loadConfig } from '../../src/config/config';
import { QueryCounter } from '../../src/database/query-counter';
import { createTestDatabase, TestDatabase } from './test-db';

export const ROOT_PASSWORD = 'root-password-for-tests';
export const EXTERNAL_URL = 'http://gitlab.test';

export interface TestUser {
  id: number;
  username: string;
  email: string;
  password: string;
  token: string;
}

export interface TestApp {
  app: App;
  config: AppConfig;
  http: TestAgent;
  root: TestUser;
  counter: QueryCounter;
  /** Creates a user through the admin API and signs it in; returns its id and private token. */
  createUser(attrs?: Record<string, unknown>): Promise<TestUser>;
  /** Runs SQL directly (for states the API cannot produce, e.g. LDAP-blocked users). */
  sql<T = unknown>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

let seq = 0;

/**
 * Starts the real app over HTTP against a new database: with `DATABASE_URL` set, a database of its
 * own cloned from the run's migrated template (see test-db.ts; dropped by `close`), otherwise a fresh
 * in-memory PGlite (also with `env.DATABASE_URL: ''`). Another instance on the same database:
 * `createApp(t.config)`.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'glv3-test-'));
  let db: TestDatabase | undefined;
  if (process.env.DATABASE_URL && env.DATABASE_URL !== '') db = await createTestDatabase();
  const config = loadConfig({
    DATA_DIR: dataDir,
    EMBEDDED_DB_DIR: 'memory://',
    DATABASE_URL: db?.url ?? '',
    LOG_LEVEL: 'silent',
    SSH_ENABLED: 'false', // specs that need it turn it on with SSH_PORT=0
    ROOT_PASSWORD,
    EXTERNAL_URL,
    SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
    ...env,
  });
  let app: App;
  try {
    app = await createApp(config);
  } catch (e) {
    await db?.release();
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const http = request(app.app.getHttpServer());
  const session = await http.post('/api/v3/session').send({ login: 'root', password: ROOT_PASSWORD }).expect(201);
  const root: TestUser = {
    id: session.body.id,
    username: 'root',
    email: session.body.email,
    password: ROOT_PASSWORD,
    token: session.body.private_token,
  };
  const t: TestApp = {
    app,
    config,
    http,
    root,
    counter: app.db.counter,
    async createUser(attrs = {}) {
      const n = ++seq;
      const body = {
        username: `user${n}`,
        email: `user${n}@example.com`,
        name: `User ${n}`,
        password: `password-${n}`,
        ...attrs,
      } as Record<string, string>;
      const res = await http.post('/api/v3/users').set('PRIVATE-TOKEN', root.token).send(body);
      if (res.status !== 201) throw new Error(`createUser: ${res.status} ${JSON.stringify(res.body)}`);
      const s = await http.post('/api/v3/session').send({ login: body.username, password: body.password });
      if (s.status !== 201) throw new Error(`sign-in: ${s.status} ${JSON.stringify(s.body)}`);
      return { id: res.body.id, username: body.username, email: body.email, password: body.password, token: s.body.private_token };
    },
    sql(text, params) {
      return app.db.dataSource.query(text, params);
    },
    async close() {
      await app.close();
      await db?.release();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

/**
 * Number of SQL statements `fn` sends. The settings cache is refreshed first, so that its
 * expiry cannot add a query in the middle of the measurement; the authentication cache is
 * emptied, so that every measurement includes authentication (whether a token was looked up a
 * few seconds before cannot change a count).
 */
export async function countQueries(t: TestApp, fn: () => Promise<unknown>): Promise<number> {
  await t.app.app.get(ApplicationSettingsService).reload();
  t.app.app.get(AuthService).forgetAll();
  const before = t.counter.count;
  await fn();
  return t.counter.count - before;
}
