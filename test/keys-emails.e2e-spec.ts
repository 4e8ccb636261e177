import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sshpk from 'sshpk';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const api = (path: string) => `/api/v3${path}`;

let keyDir: string;
let keySeq = 0;

/** A fresh OpenSSH public key made by ssh-keygen (`type` rsa, ed25519 or ecdsa). */
function sshKeygen(type: 'rsa' | 'ed25519' | 'ecdsa', bits?: number): string {
  const file = join(keyDir, `k${++keySeq}`);
  const args = ['-q', '-t', type, '-N', '', '-C', `spec key ${keySeq}`, '-f', file];
  if (bits) args.push('-b', String(bits));
  execFileSync('ssh-keygen', args, { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8');
}

/** A public key made by node:crypto and converted to OpenSSH form by sshpk (for types ssh-keygen won't make). */
function cryptoKey(kind: 'rsa-768' | 'dsa' | 'ed25519'): string {
  const pair =
    kind === 'rsa-768'
      ? generateKeyPairSync('rsa', { modulusLength: 768 })
      : kind === 'dsa'
        ? generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 })
        : generateKeyPairSync('ed25519');
  const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  return sshpk.parseKey(pem, 'pem').toString('ssh');
}

describe('SSH keys and emails API', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'glv3-keys-'));
    t = await startTestApp();
    alice = await t.createUser({ username: 'alice', email: 'alice@example.com' });
    bob = await t.createUser({ username: 'bob', email: 'bob@example.com' });
  });
  afterAll(async () => {
    await t.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  const asRoot = () => ({ 'PRIVATE-TOKEN': t.root.token });
  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });

  describe('own SSH keys (/user/keys)', () => {
    it.each([
      ['rsa', () => sshKeygen('rsa', 2048)],
      ['ed25519', () => sshKeygen('ed25519')],
      ['ecdsa (256)', () => sshKeygen('ecdsa', 256)],
      ['ecdsa (521)', () => sshKeygen('ecdsa', 521)],
      ['ed25519 via node:crypto + sshpk', () => cryptoKey('ed25519')],
    ])('adds a real %s key: 201 with the key', async (_name, make) => {
      const key = make();
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: `laptop ${_name}`, key })
        .expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'SSHKey');
      expect(res.body).toMatchObject({ id: expect.any(Number), title: `laptop ${_name}`, key: key.trim() });
      expect(new Date(res.body.created_at).toString()).not.toBe('Invalid Date');
      const one = await t.http
        .get(api(`/user/keys/${res.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(one.body).toEqual(res.body);
    });

    it('lists own keys only', async () => {
      const bobKey = await t.http
        .post(api('/user/keys'))
        .set(as(bob))
        .send({ title: 'bob', key: sshKeygen('ed25519') })
        .expect(201);
      const mine = await t.http.get(api('/user/keys')).set(as(alice)).expect(200);
      expect(mine.headers['content-type']).toBe('application/json');
      expect(mine.body).toHaveLength(5);
      await expectSchema(mine, 'SSHKey[]');
      expect(mine.body.map((k: { id: number }) => k.id)).not.toContain(bobKey.body.id);
      const his = await t.http.get(api('/user/keys')).set(as(bob)).expect(200);
      expect(his.body.map((k: { id: number }) => k.id)).toEqual([bobKey.body.id]);
    });

    it('stores the key trimmed, with runs of whitespace collapsed', async () => {
      const key = sshKeygen('ed25519').trim();
      const [type, blob] = key.split(' ');
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'messy', key: `\n  ${type}   ${blob}\tcomment here  \r\n` })
        .expect(201);
      expect(res.body.key).toBe(`${type} ${blob} comment here`);
    });

    it('accepts form, multipart and query-string input', async () => {
      const form = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .type('form')
        .send({ title: 'form', key: sshKeygen('ed25519') })
        .expect(201);
      expect(form.body.title).toBe('form');
      const multi = await t.http.post(api('/user/keys')).set(as(alice)).field('title', 'multi').field('key', sshKeygen('ed25519')).expect(201);
      expect(multi.body.title).toBe('multi');
      const query = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .query({ title: 'query', key: sshKeygen('ed25519') })
        .expect(201);
      expect(query.body.title).toBe('query');
    });

    it.each([
      ['plain text', 'not a key at all'],
      ['a bare type', 'ssh-rsa'],
      ['a truncated blob', 'ssh-rsa AAAA'],
      ['a blob that is not base64', 'ssh-rsa !!!!$$$$%%%%'],
      ['random base64', `ssh-ed25519 ${Buffer.from('0123456789abcdefghij').toString('base64')} x`],
      ['an over-long key', `ssh-rsa ${'A'.repeat(20000)}`],
      ['an empty-looking key', '\u00a0'],
      ['a number', 12345],
    ])('400, never 500, for garbage: %s', async (_name, key) => {
      const res = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'garbage', key });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.message).toBeDefined();
    });

    it('400 with a field map for an invalid key', async () => {
      const res = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 't', key: 'ssh-rsa AAAAB3NzaC1yc2E' }).expect(400);
      expect(res.body).toEqual({ message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
    });

    it('400 for a private key posted by mistake, and it is not stored', async () => {
      const file = join(keyDir, 'private-mistake');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { stdio: 'ignore' });
      const before = await t.http.get(api('/user/keys')).set(as(alice)).expect(200);
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'oops', key: readFileSync(file, 'utf8') })
        .expect(400);
      expect(res.body.message).toHaveProperty('key');
      const after = await t.http.get(api('/user/keys')).set(as(alice)).expect(200);
      expect(after.body).toHaveLength(before.body.length);
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM keys WHERE key LIKE '%PRIVATE KEY%'`);
      expect(rows[0].n).toBe(0);
    });

    it('400 for key types and sizes that are not allowed (RSA < 1024 bits, DSA)', async () => {
      const small = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'small', key: cryptoKey('rsa-768') })
        .expect(400);
      expect(small.body.message).toHaveProperty('key');
      const dsa = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'dsa', key: cryptoKey('dsa') })
        .expect(400);
      expect(dsa.body.message).toHaveProperty('key');
    });

    it('400 for a type label that does not match the key blob', async () => {
      const [, blob] = sshKeygen('rsa', 2048).split(' ');
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'liar', key: `ssh-ed25519 ${blob}` });
      expect(res.status).toBe(400);
    });

    it('400 for a structured (non-string) key value', async () => {
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 'obj', key: { a: 1 } })
        .expect(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "key" is invalid' });
    });

    it('400 with a field map for a title longer than 255 characters', async () => {
      const res = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: 't'.repeat(256), key: sshKeygen('ed25519') })
        .expect(400);
      expect(res.body).toEqual({ message: { title: ['is too long (maximum is 255 characters)'] } });
    });

    it('400 with the fingerprint/key map for a taken key: own, another user’s, and with another comment', async () => {
      const key = sshKeygen('ed25519');
      await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'first', key }).expect(201);
      const taken = { message: { fingerprint: ['has already been taken'], key: ['has already been taken'] } };
      const again = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'again', key }).expect(400);
      expect(again.body).toEqual(taken);
      const other = await t.http.post(api('/user/keys')).set(as(bob)).send({ title: 'bob', key }).expect(400);
      expect(other.body).toEqual(taken);
      const [type, blob] = key.split(' ');
      const recommented = await t.http
        .post(api('/user/keys'))
        .set(as(bob))
        .send({ title: 'bob', key: `${type} ${blob} other@host` })
        .expect(400);
      expect(recommented.body).toEqual(taken);
    });

    it('gives exactly one 201 when the same key is added concurrently, 400 taken to the rest', async () => {
      const key = sshKeygen('ed25519');
      const results = await Promise.all(
        [alice, bob, alice, bob].map((u, i) =>
          t.http
            .post(api('/user/keys'))
            .set(as(u))
            .send({ title: `race ${i}`, key }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
      for (const r of results.filter((x) => x.status === 400)) {
        expect(r.body.message.fingerprint).toEqual(['has already been taken']);
      }
    });

    it('400 "not given" for a missing or blank title or key', async () => {
      const noTitle = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ key: sshKeygen('ed25519') })
        .expect(400);
      expect(noTitle.body).toEqual({ message: '400 (Bad request) "title" not given' });
      const noKey = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'x' }).expect(400);
      expect(noKey.body).toEqual({ message: '400 (Bad request) "key" not given' });
      const blank = await t.http
        .post(api('/user/keys'))
        .set(as(alice))
        .send({ title: '  ', key: sshKeygen('ed25519') })
        .expect(400);
      expect(blank.body).toEqual({ message: '400 (Bad request) "title" not given' });
      const empty = await t.http.post(api('/user/keys')).set(as(alice)).send({}).expect(400);
      expect(empty.body.message).toMatch(/^400 \(Bad request\) "(title|key)" not given$/);
    });

    it("404 for someone else's key or an unknown id", async () => {
      const bobKey = await t.http
        .post(api('/user/keys'))
        .set(as(bob))
        .send({ title: 'b', key: sshKeygen('ed25519') })
        .expect(201);
      const res = await t.http
        .get(api(`/user/keys/${bobKey.body.id}`))
        .set(as(alice))
        .expect(404);
      expect(res.body).toEqual({ message: '404 Key Not Found' });
      await t.http.get(api('/user/keys/999999')).set(as(alice)).expect(404);
      await t.http.get(api('/user/keys/abc')).set(as(alice)).expect(404);
    });

    it('DELETE is idempotent: 200 with the key, then 200 again; the fingerprint is free again', async () => {
      const key = sshKeygen('ecdsa', 384);
      const created = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'temp', key }).expect(201);
      const del = await t.http
        .delete(api(`/user/keys/${created.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(del.body).toMatchObject({ id: created.body.id, title: 'temp' });
      await t.http
        .get(api(`/user/keys/${created.body.id}`))
        .set(as(alice))
        .expect(404);
      const again = await t.http
        .delete(api(`/user/keys/${created.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(again.text).toBe('');
      await t.http.delete(api('/user/keys/999999')).set(as(alice)).expect(200);
      await t.http.post(api('/user/keys')).set(as(bob)).send({ title: 'reuse', key }).expect(201);
    });

    it("DELETE of someone else's key answers 200 but leaves it alone", async () => {
      const bobKey = await t.http
        .post(api('/user/keys'))
        .set(as(bob))
        .send({ title: 'keep', key: sshKeygen('ed25519') })
        .expect(201);
      const res = await t.http
        .delete(api(`/user/keys/${bobKey.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(res.text).toBe('');
      await t.http
        .get(api(`/user/keys/${bobKey.body.id}`))
        .set(as(bob))
        .expect(200);
    });

    it('401 without a token', async () => {
      const res = await t.http.get(api('/user/keys')).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
      await t.http
        .post(api('/user/keys'))
        .send({ title: 'x', key: sshKeygen('ed25519') })
        .expect(401);
    });
  });

  describe("other users' SSH keys (admin)", () => {
    it('GET /users/:id/keys lists that user’s keys', async () => {
      const mine = await t.http.get(api('/user/keys')).set(as(bob)).expect(200);
      const res = await t.http
        .get(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .expect(200);
      expect(res.body.map((k: { id: number }) => k.id).sort()).toEqual(mine.body.map((k: { id: number }) => k.id).sort());
      await expectSchema(res, 'SSHKey[]');
    });

    it('GET /users/:id/keys: 404 for an unknown user, 403 for a non-admin', async () => {
      const res = await t.http.get(api('/users/999999/keys')).set(asRoot()).expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
      const forbidden = await t.http
        .get(api(`/users/${bob.id}/keys`))
        .set(as(alice))
        .expect(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
    });

    it('POST /users/:id/keys adds a key to that user: 201', async () => {
      const key = sshKeygen('rsa', 2048);
      const res = await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .send({ title: 'by admin', key })
        .expect(201);
      expect(res.body).toMatchObject({ title: 'by admin', key: key.trim() });
      const his = await t.http
        .get(api(`/user/keys/${res.body.id}`))
        .set(as(bob))
        .expect(200);
      expect(his.body.id).toBe(res.body.id);
      const root = await t.http.get(api('/user/keys')).set(asRoot()).expect(200);
      expect(root.body.map((k: { id: number }) => k.id)).not.toContain(res.body.id);
    });

    it('POST /users/:id/keys: 404 for an unknown or non-numeric user, 403 for a non-admin, 400 not given', async () => {
      const unknown = await t.http
        .post(api('/users/999999/keys'))
        .set(asRoot())
        .send({ title: 'x', key: sshKeygen('ed25519') })
        .expect(404);
      expect(unknown.body).toEqual({ message: '404 User Not Found' });
      await t.http
        .post(api('/users/ASDF/keys'))
        .set(asRoot())
        .send({ title: 'x', key: sshKeygen('ed25519') })
        .expect(404);
      await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(as(alice))
        .send({ title: 'x', key: sshKeygen('ed25519') })
        .expect(403);
      const missing = await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .send({ title: 'x' })
        .expect(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "key" not given' });
    });

    it('POST /users/:id/keys refuses garbage and taken keys without creating anything', async () => {
      const before = await t.http
        .get(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .expect(200);
      const garbage = await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .send({ title: 'x', key: 'ssh-rsa nope' });
      expect([400, 404]).toContain(garbage.status);
      const taken = await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .send({ title: 'x', key: before.body[0].key });
      expect([400, 404]).toContain(taken.status);
      const after = await t.http
        .get(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .expect(200);
      expect(after.body).toHaveLength(before.body.length);
    });

    it('DELETE /users/:uid/keys/:id: 200 with the key, then 404 Key Not Found', async () => {
      const created = await t.http
        .post(api(`/users/${bob.id}/keys`))
        .set(asRoot())
        .send({ title: 'gone', key: sshKeygen('ed25519') })
        .expect(201);
      const del = await t.http
        .delete(api(`/users/${bob.id}/keys/${created.body.id}`))
        .set(asRoot())
        .expect(200);
      expect(del.body).toMatchObject({ id: created.body.id, title: 'gone' });
      await t.http
        .get(api(`/user/keys/${created.body.id}`))
        .set(as(bob))
        .expect(404);
      const again = await t.http
        .delete(api(`/users/${bob.id}/keys/${created.body.id}`))
        .set(asRoot())
        .expect(404);
      expect(again.body).toEqual({ message: '404 Key Not Found' });
    });

    it('DELETE /users/:uid/keys/:id: 404 User Not Found, 404 for a key of another user, 403 for a non-admin', async () => {
      const bobKey = await t.http
        .post(api('/user/keys'))
        .set(as(bob))
        .send({ title: 'b', key: sshKeygen('ed25519') })
        .expect(201);
      const noUser = await t.http
        .delete(api(`/users/999999/keys/${bobKey.body.id}`))
        .set(asRoot())
        .expect(404);
      expect(noUser.body).toEqual({ message: '404 User Not Found' });
      const wrongUser = await t.http
        .delete(api(`/users/${alice.id}/keys/${bobKey.body.id}`))
        .set(asRoot())
        .expect(404);
      expect(wrongUser.body).toEqual({ message: '404 Key Not Found' });
      await t.http
        .delete(api(`/users/${bob.id}/keys/${bobKey.body.id}`))
        .set(as(alice))
        .expect(403);
      await t.http
        .get(api(`/user/keys/${bobKey.body.id}`))
        .set(as(bob))
        .expect(200);
    });

    it('GET /keys/:id shows the key with its owner (admin view)', async () => {
      const key = sshKeygen('ed25519');
      const created = await t.http.post(api('/user/keys')).set(as(alice)).send({ title: 'lookup', key }).expect(201);
      const res = await t.http
        .get(api(`/keys/${created.body.id}`))
        .set(asRoot())
        .expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toMatchObject({ id: created.body.id, title: 'lookup', key: key.trim() });
      expect(res.body.user).toMatchObject({ id: alice.id, username: 'alice', email: 'alice@example.com', is_admin: false });
      expect(res.body.user).toHaveProperty('identities');
      expect(res.body.user).not.toHaveProperty('private_token');
      await expectSchema(res, 'SSHKeyWithUser');
    });

    it('GET /keys/:id: 403 for a non-admin (even the owner), 404 when missing', async () => {
      const own = await t.http.get(api('/user/keys')).set(as(alice)).expect(200);
      const forbidden = await t.http
        .get(api(`/keys/${own.body[0].id}`))
        .set(as(alice))
        .expect(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
      const missing = await t.http.get(api('/keys/999999')).set(asRoot()).expect(404);
      expect(missing.body).toEqual({ message: '404 Key Not Found' });
      await t.http.get(api('/keys/nope')).set(asRoot()).expect(404);
    });
  });

  describe('own emails (/user/emails)', () => {
    it('adds an email: 201 with id and email', async () => {
      const res = await t.http.post(api('/user/emails')).set(as(alice)).send({ email: 'alice.work@example.net' }).expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ id: expect.any(Number), email: 'alice.work@example.net' });
      await expectSchema(res, 'Email');
      const one = await t.http
        .get(api(`/user/emails/${res.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(one.body).toEqual(res.body);
    });

    it('accepts form, multipart and query-string input', async () => {
      await t.http.post(api('/user/emails')).set(as(alice)).type('form').send({ email: 'a.form@example.net' }).expect(201);
      await t.http.post(api('/user/emails')).set(as(alice)).field('email', 'a.multi@example.net').expect(201);
      await t.http.post(api('/user/emails')).set(as(alice)).query({ email: 'a.query@example.net' }).expect(201);
    });

    it('lists own emails only (the primary address is not among them)', async () => {
      const bobEmail = await t.http.post(api('/user/emails')).set(as(bob)).send({ email: 'bob.home@example.net' }).expect(201);
      const mine = await t.http.get(api('/user/emails')).set(as(alice)).expect(200);
      const addresses = mine.body.map((e: { email: string }) => e.email).sort();
      expect(addresses).toEqual(['a.form@example.net', 'a.multi@example.net', 'a.query@example.net', 'alice.work@example.net']);
      await expectSchema(mine, 'Email[]');
      const his = await t.http.get(api('/user/emails')).set(as(bob)).expect(200);
      expect(his.body).toEqual([bobEmail.body]);
    });

    it.each(['not-an-email', 'two@@example.com', 'no-tld@localhost', 'spa ce@example.com'])(
      '400 with a field map for the invalid address %p',
      async (email) => {
        const res = await t.http.post(api('/user/emails')).set(as(alice)).send({ email }).expect(400);
        expect(res.body).toEqual({ message: { email: ['is invalid'] } });
      },
    );

    it.each([
      ['own primary', 'alice@example.com'],
      ["another user's primary", 'bob@example.com'],
      ["another user's primary, other case", 'BOB@Example.com'],
      ["root's primary", 'admin@example.com'],
      ['own secondary', 'alice.work@example.net'],
      ['own secondary, other case', 'Alice.Work@EXAMPLE.net'],
      ["another user's secondary", 'bob.home@example.net'],
      ["another user's secondary, other case", 'Bob.Home@example.NET'],
    ])('400 "has already been taken" for %s', async (_what, email) => {
      const res = await t.http.post(api('/user/emails')).set(as(alice)).send({ email }).expect(400);
      expect(res.body).toEqual({ message: { email: ['has already been taken'] } });
    });

    it('gives exactly one 201 when the same address is added concurrently, 400 taken to the rest', async () => {
      const results = await Promise.all([alice, bob, alice, bob].map((u) => t.http.post(api('/user/emails')).set(as(u)).send({ email: 'race@example.net' })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
      for (const r of results.filter((x) => x.status === 400)) {
        expect(r.body).toEqual({ message: { email: ['has already been taken'] } });
      }
    });

    it('400 not given for a missing or blank email', async () => {
      const res = await t.http.post(api('/user/emails')).set(as(alice)).send({}).expect(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "email" not given' });
      const blank = await t.http.post(api('/user/emails')).set(as(alice)).send({ email: ' ' }).expect(400);
      expect(blank.body).toEqual({ message: '400 (Bad request) "email" not given' });
    });

    it("404 for someone else's email or an unknown id", async () => {
      const his = await t.http.get(api('/user/emails')).set(as(bob)).expect(200);
      const res = await t.http
        .get(api(`/user/emails/${his.body[0].id}`))
        .set(as(alice))
        .expect(404);
      expect(res.body).toEqual({ message: '404 Email Not Found' });
      await t.http.get(api('/user/emails/999999')).set(as(alice)).expect(404);
      await t.http.get(api('/user/emails/x')).set(as(alice)).expect(404);
    });

    it('DELETE is idempotent: 200 with the email, then 200 again; the address is free again', async () => {
      const created = await t.http.post(api('/user/emails')).set(as(alice)).send({ email: 'temp@example.net' }).expect(201);
      const del = await t.http
        .delete(api(`/user/emails/${created.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(del.body).toEqual(created.body);
      const again = await t.http
        .delete(api(`/user/emails/${created.body.id}`))
        .set(as(alice))
        .expect(200);
      expect(again.text).toBe('');
      await t.http
        .get(api(`/user/emails/${created.body.id}`))
        .set(as(alice))
        .expect(404);
      await t.http.post(api('/user/emails')).set(as(bob)).send({ email: 'TEMP@example.net' }).expect(201);
    });

    it("DELETE of someone else's email answers 200 but leaves it alone", async () => {
      const his = await t.http.get(api('/user/emails')).set(as(bob)).expect(200);
      const res = await t.http
        .delete(api(`/user/emails/${his.body[0].id}`))
        .set(as(alice))
        .expect(200);
      expect(res.text).toBe('');
      await t.http
        .get(api(`/user/emails/${his.body[0].id}`))
        .set(as(bob))
        .expect(200);
    });

    it('a secondary email blocks the address as a primary email of another user', async () => {
      const res = await t.http
        .put(api(`/users/${bob.id}`))
        .set(asRoot())
        .send({ email: 'alice.work@example.net' })
        .expect(404);
      expect(res.body.message).toContain('Email has already been taken');
      const created = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send({ email: 'ALICE.WORK@example.net', username: 'newbie', name: 'Newbie', password: 'password-123' })
        .expect(409);
      expect(created.body).toEqual({ message: '409 Email has already been taken' });
    });

    it('401 without a token', async () => {
      await t.http.get(api('/user/emails')).expect(401);
      await t.http.post(api('/user/emails')).send({ email: 'anon@example.net' }).expect(401);
    });
  });

  describe("other users' emails (admin)", () => {
    it('GET /users/:id/emails lists that user’s emails', async () => {
      const mine = await t.http.get(api('/user/emails')).set(as(alice)).expect(200);
      const res = await t.http
        .get(api(`/users/${alice.id}/emails`))
        .set(asRoot())
        .expect(200);
      expect(res.body.map((e: { id: number }) => e.id).sort()).toEqual(mine.body.map((e: { id: number }) => e.id).sort());
    });

    it('GET /users/:id/emails: 404 for an unknown user, 403 for a non-admin', async () => {
      const res = await t.http.get(api('/users/999999/emails')).set(asRoot()).expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
      await t.http
        .get(api(`/users/${alice.id}/emails`))
        .set(as(bob))
        .expect(403);
    });

    it('POST /users/:id/emails adds an email to that user: 201', async () => {
      const res = await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .send({ email: 'bob.byadmin@example.net' })
        .expect(201);
      expect(res.body).toEqual({ id: expect.any(Number), email: 'bob.byadmin@example.net' });
      const his = await t.http
        .get(api(`/user/emails/${res.body.id}`))
        .set(as(bob))
        .expect(200);
      expect(his.body).toEqual(res.body);
    });

    it('POST /users/:id/emails: 404 unknown user, 403 non-admin, 400 not given, refuses invalid and taken', async () => {
      const unknown = await t.http.post(api('/users/999999/emails')).set(asRoot()).send({ email: 'x1@example.net' }).expect(404);
      expect(unknown.body).toEqual({ message: '404 User Not Found' });
      await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(as(alice))
        .send({ email: 'x2@example.net' })
        .expect(403);
      const missing = await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .send({})
        .expect(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "email" not given' });
      const before = await t.http
        .get(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .expect(200);
      const invalid = await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .send({ email: 'nope' });
      expect([400, 404]).toContain(invalid.status);
      const taken = await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .send({ email: 'Alice@Example.com' });
      expect([400, 404]).toContain(taken.status);
      const after = await t.http
        .get(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .expect(200);
      expect(after.body).toHaveLength(before.body.length);
    });

    it('DELETE /users/:uid/emails/:id: 200 with the email, then 404 Email Not Found', async () => {
      const created = await t.http
        .post(api(`/users/${bob.id}/emails`))
        .set(asRoot())
        .send({ email: 'bob.gone@example.net' })
        .expect(201);
      const del = await t.http
        .delete(api(`/users/${bob.id}/emails/${created.body.id}`))
        .set(asRoot())
        .expect(200);
      expect(del.body).toEqual(created.body);
      const again = await t.http
        .delete(api(`/users/${bob.id}/emails/${created.body.id}`))
        .set(asRoot())
        .expect(404);
      expect(again.body).toEqual({ message: '404 Email Not Found' });
    });

    it('DELETE /users/:uid/emails/:id: 404 User Not Found, 404 for an email of another user, 403 for a non-admin', async () => {
      const bobs = await t.http.get(api('/user/emails')).set(as(bob)).expect(200);
      const id = bobs.body[0].id;
      const noUser = await t.http
        .delete(api(`/users/999999/emails/${id}`))
        .set(asRoot())
        .expect(404);
      expect(noUser.body).toEqual({ message: '404 User Not Found' });
      const wrongUser = await t.http
        .delete(api(`/users/${alice.id}/emails/${id}`))
        .set(asRoot())
        .expect(404);
      expect(wrongUser.body).toEqual({ message: '404 Email Not Found' });
      await t.http
        .delete(api(`/users/${bob.id}/emails/${id}`))
        .set(as(alice))
        .expect(403);
      await t.http
        .get(api(`/user/emails/${id}`))
        .set(as(bob))
        .expect(200);
    });

    it('deleting a user removes its keys and emails and frees them', async () => {
      const carol = await t.createUser({ username: 'carol' });
      const key = sshKeygen('ed25519');
      await t.http.post(api('/user/keys')).set(as(carol)).send({ title: 'c', key }).expect(201);
      await t.http.post(api('/user/emails')).set(as(carol)).send({ email: 'carol.second@example.net' }).expect(201);
      await t.http
        .delete(api(`/users/${carol.id}`))
        .set(asRoot())
        .expect(200);
      await t.http.post(api('/user/keys')).set(as(bob)).send({ title: 'inherited', key }).expect(201);
      await t.http.post(api('/user/emails')).set(as(bob)).send({ email: 'carol.second@example.net' }).expect(201);
    });
  });

  describe('the notification email follows the addresses (8.17: update_secondary_emails!, set_notification_email)', () => {
    const notificationEmail = async (u: TestUser) => (await t.http.get(api('/notification_settings')).set(as(u)).expect(200)).body.notification_email as string;
    const setNotificationEmail = (u: TestUser, email: string) =>
      t.http.put(api('/notification_settings')).set(as(u)).send({ notification_email: email }).expect(200);
    /** The stored value (null: the primary address), once the durable reaction has run. */
    async function storedBecomesNull(u: TestUser): Promise<void> {
      const end = Date.now() + 20_000;
      for (;;) {
        const rows = await t.sql<{ notification_email: string | null }>(
          `SELECT notification_email FROM notification_settings WHERE user_id = $1 AND source_type = 'global'`,
          [u.id],
        );
        if (rows[0]?.notification_email === null) return;
        if (Date.now() > end) throw new Error(`notification_email still ${rows[0]?.notification_email}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const addEmail = async (u: TestUser, email: string) =>
      (await t.http.post(api('/user/emails')).set(as(u)).send({ email }).expect(201)).body as { id: number };

    it.each([
      ['DELETE /user/emails/:id', (u: TestUser, id: number) => t.http.delete(api(`/user/emails/${id}`)).set(as(u))],
      ['DELETE /users/:id/emails/:id', (u: TestUser, id: number) => t.http.delete(api(`/users/${u.id}/emails/${id}`)).set(asRoot())],
    ])('%s: a deleted secondary address that was the notification email gives way to the primary one', async (route, del) => {
      const by = route.startsWith('DELETE /users/') ? 'admin' : 'own';
      const u = await t.createUser({ email: `notify-${by}@example.com` });
      const alt = `notify-alt-${by}@example.net`;
      const e = await addEmail(u, alt);
      await setNotificationEmail(u, alt);
      expect(await notificationEmail(u)).toBe(alt);
      await del(u, e.id).expect(200);
      expect(await notificationEmail(u)).toBe(u.email); // at once
      await storedBecomesNull(u); // and reset, as GitLab does: adding the address again does not bring it back
      await addEmail(u, alt);
      expect(await notificationEmail(u)).toBe(u.email);
    });

    it('deleting another secondary address leaves the notification email alone', async () => {
      const u = await t.createUser({ email: 'notify-keep@example.com' });
      await addEmail(u, 'notify-keep-alt@example.net');
      const other = await addEmail(u, 'notify-keep-other@example.net');
      await setNotificationEmail(u, 'notify-keep-alt@example.net');
      await t.http
        .delete(api(`/user/emails/${other.id}`))
        .set(as(u))
        .expect(200);
      await new Promise((r) => setTimeout(r, 1500)); // time for the reaction to run
      expect(await notificationEmail(u)).toBe('notify-keep-alt@example.net');
    });

    it('a new primary address: a notification email that was the old one follows it', async () => {
      const u = await t.createUser({ email: 'notify-old@example.com' });
      await setNotificationEmail(u, 'notify-old@example.com');
      await t.http
        .put(api(`/users/${u.id}`))
        .set(asRoot())
        .send({ email: 'notify-new@example.com' })
        .expect(200);
      expect(await notificationEmail(u)).toBe('notify-new@example.com');
      await storedBecomesNull(u);
    });

    it("one of the user's own secondary addresses may become the primary one: the two swap (8.17), the notification email follows", async () => {
      const u = await t.createUser({ email: 'swap-old@example.com' });
      await addEmail(u, 'swap-new@example.net');
      await setNotificationEmail(u, 'swap-old@example.com');
      const res = await t.http
        .put(api(`/users/${u.id}`))
        .set(asRoot())
        .send({ email: 'swap-new@example.net' })
        .expect(200);
      expect(res.body.email).toBe('swap-new@example.net');
      const secondaries = await t.http.get(api('/user/emails')).set(as(u)).expect(200);
      expect(secondaries.body.map((e: { email: string }) => e.email)).toEqual(['swap-old@example.com']);
      expect(await notificationEmail(u)).toBe('swap-new@example.net');
      await storedBecomesNull(u);
      // another user's secondary address is still refused as a primary one
      const other = await t.createUser({ email: 'swap-other@example.com' });
      const refused = await t.http
        .put(api(`/users/${other.id}`))
        .set(asRoot())
        .send({ email: 'swap-old@example.com' })
        .expect(404);
      expect(refused.body.message).toContain('Email has already been taken');
    });
  });
});
