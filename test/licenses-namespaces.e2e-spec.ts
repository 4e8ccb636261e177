import { expectSchema } from './helpers/schema';
import { EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';

describe('licenses and namespaces', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  const year = String(new Date().getUTCFullYear());

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.com' });
    bob = await t.createUser({ username: 'bob_builder', name: 'Robert Builder', email: 'bob@example.com' });
  });
  afterAll(() => t.close());

  describe('GET /licenses', () => {
    it('answers without authentication with every template and all its fields', async () => {
      const res = await t.http.get('/api/v3/licenses').expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeGreaterThanOrEqual(10);
      await expectSchema(res, 'License[]');
      for (const l of res.body) {
        expect(typeof l.key).toBe('string');
        expect(l.key).toBe(l.key.toLowerCase());
        expect(typeof l.name).toBe('string');
        expect(l.nickname === null || typeof l.nickname === 'string').toBe(true);
        expect(typeof l.featured).toBe('boolean');
        expect(l.popular).toBe(l.featured);
        expect(l.html_url).toMatch(/^https?:\/\//);
        expect(typeof l.source_url).toBe('string');
        expect(typeof l.description).toBe('string');
        for (const f of ['conditions', 'permissions', 'limitations']) {
          expect(Array.isArray(l[f])).toBe(true);
          for (const item of l[f]) expect(typeof item).toBe('string');
        }
        expect(typeof l.content).toBe('string');
        expect(l.content.length).toBeGreaterThan(0);
      }
      const keys = res.body.map((l: { key: string }) => l.key);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys).toEqual(expect.arrayContaining(['mit', 'apache-2.0', 'gpl-3.0', 'gpl-2.0', 'bsd-3-clause', 'unlicense']));
    });

    it('is whole on the first page by default, and paged with per_page like every list', async () => {
      const all = await t.http.get('/api/v3/licenses').expect(200);
      expect(all.body.length).toBeGreaterThan(20);
      expect(all.headers).toMatchObject({ 'x-total': String(all.body.length), 'x-total-pages': '1' });
      const res = await t.http.get('/api/v3/licenses?per_page=2').expect(200);
      expect(res.body).toEqual(all.body.slice(0, 2));
      expect(res.headers).toMatchObject({ 'x-total': String(all.body.length), 'x-per-page': '2', 'x-next-page': '2' });
    });

    it.each(['1', 'true', 'yes'])('popular=%s returns only the featured ones', async (v) => {
      const res = await t.http.get(`/api/v3/licenses?popular=${v}`).expect(200);
      expect(res.body.map((l: { key: string }) => l.key).sort()).toEqual(['apache-2.0', 'gpl-3.0', 'mit']);
      for (const l of res.body) expect(l).toMatchObject({ featured: true, popular: true });
    });

    it('popular=false or 0 returns all of them', async () => {
      const all = await t.http.get('/api/v3/licenses').expect(200);
      for (const v of ['false', '0']) {
        const res = await t.http.get(`/api/v3/licenses?popular=${v}`).expect(200);
        expect(res.body.length).toBe(all.body.length);
      }
    });

    it('also answers with credentials', async () => {
      const res = await t.http.get('/api/v3/licenses?popular=1').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body).toHaveLength(3);
    });
  });

  describe('GET /licenses/:key', () => {
    it('fills [year] with the current year, [fullname] and [project] from the parameters', async () => {
      const res = await t.http.get('/api/v3/licenses/mit?fullname=Jane%20Doe&project=My%20Project').expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'License');
      expect(res.body).toMatchObject({ key: 'mit', name: 'MIT License', featured: true, popular: true });
      expect(res.body.content).toContain(`Copyright (c) ${year} Jane Doe`);
      expect(res.body.content).not.toContain('[year]');
      expect(res.body.content).not.toContain('[fullname]');
    });

    it('fills [project] where the template has it', async () => {
      const res = await t.http.get('/api/v3/licenses/bsd-4-clause?fullname=Jane&project=Widget').expect(200);
      expect(res.body.content).toContain('Widget');
      expect(res.body.content).not.toContain('[project]');
      expect(res.body.content).toContain(`Copyright (c) ${year}, Jane`);
      expect(res.body.content).toContain('developed by Widget.');
    });

    it('fills the GNU-style placeholders of the GPL', async () => {
      const res = await t.http.get('/api/v3/licenses/gpl-3.0?fullname=Jane%20Doe&project=Widget').expect(200);
      expect(res.body.content).toContain(`Copyright (C) ${year}  Jane Doe`);
      expect(res.body.content).not.toContain('<year>');
      expect(res.body.content).not.toContain('<name of author>');
      expect(res.body.content).not.toContain("<one line to give the program's name");
      expect(res.body.content).toContain('Widget');
    });

    it('fills the Apache placeholders [yyyy] and [name of copyright owner]', async () => {
      const res = await t.http.get('/api/v3/licenses/apache-2.0?fullname=ACME%20Corp').expect(200);
      expect(res.body.content).toContain(`Copyright ${year} ACME Corp`);
      expect(res.body.content).not.toContain('[yyyy]');
      expect(res.body.content).not.toContain('[name of copyright owner]');
    });

    it("without fullname, an authenticated caller's name fills the holder (private token)", async () => {
      const res = await t.http.get('/api/v3/licenses/mit').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} Alice Liddell`);
    });

    it("without fullname, an authenticated caller's name fills the holder (private_token param)", async () => {
      const res = await t.http.get(`/api/v3/licenses/mit?private_token=${bob.token}`).expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} Robert Builder`);
    });

    it("without fullname, an authenticated caller's name fills the holder (OAuth bearer)", async () => {
      const grant = await t.http.post('/oauth/token').send({ grant_type: 'password', username: 'alice', password: alice.password }).expect(200);
      const res = await t.http.get('/api/v3/licenses/mit').set('Authorization', `Bearer ${grant.body.access_token}`).expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} Alice Liddell`);
    });

    it('an explicit fullname wins over the caller', async () => {
      const res = await t.http.get('/api/v3/licenses/mit?fullname=Someone%20Else').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} Someone Else`);
      expect(res.body.content).not.toContain('Alice');
    });

    it('anonymously, the year is filled and the holder placeholder stays', async () => {
      const res = await t.http.get('/api/v3/licenses/mit').expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} [fullname]`);
    });

    it('an invalid token on this public route is ignored', async () => {
      const res = await t.http.get('/api/v3/licenses/mit').set('PRIVATE-TOKEN', 'bogus').expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} [fullname]`);
    });

    it('replacement text is taken literally', async () => {
      const res = await t.http.get(`/api/v3/licenses/mit?fullname=${encodeURIComponent("$& $1 $' <b>")}`).expect(200);
      expect(res.body.content).toContain(`Copyright (c) ${year} $& $1 $' <b>`);
    });

    it('does not alter the template list', async () => {
      await t.http.get('/api/v3/licenses/mit?fullname=Mutant').expect(200);
      const list = await t.http.get('/api/v3/licenses').expect(200);
      const mit = list.body.find((l: { key: string }) => l.key === 'mit');
      expect(mit.content).toContain('[year]');
      expect(mit.content).toContain('[fullname]');
      expect(mit.content).not.toContain('Mutant');
    });

    it('accepts the .json suffix', async () => {
      const res = await t.http.get('/api/v3/licenses/apache-2.0.json').expect(200);
      expect(res.body.key).toBe('apache-2.0');
    });

    it('an unknown key is 404 License Not Found', async () => {
      const res = await t.http.get('/api/v3/licenses/not-a-license').expect(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '404 License Not Found' });
      const authed = await t.http.get('/api/v3/licenses/gpl-9.0').set('PRIVATE-TOKEN', alice.token).expect(404);
      expect(authed.body).toEqual({ message: '404 License Not Found' });
    });
  });

  describe('GET /namespaces', () => {
    it('401 without a token', async () => {
      const res = await t.http.get('/api/v3/namespaces').expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('a normal user sees only its own namespace', async () => {
      const res = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'Namespace[]');
      expect(res.body).toHaveLength(1);
      const [ns] = res.body;
      expect(ns).toEqual({ id: expect.any(Number), path: 'alice', kind: 'user' });
      const rows = await t.sql<{ id: number }>(`SELECT id FROM namespaces WHERE owner_id = $1 AND kind = 'user'`, [alice.id]);
      expect(ns.id).toBe(Number(rows[0].id));
      expect(res.headers['x-total']).toBe('1');
    });

    it("a normal user does not see another user's or a group namespace, even by search", async () => {
      let res = await t.http.get('/api/v3/namespaces?search=bob').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body).toEqual([]);
      expect(res.headers['x-total']).toBe('0');
      res = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', bob.token).expect(200);
      expect(res.body.map((n: { path: string }) => n.path)).toEqual(['bob_builder']);
    });

    describe('as an administrator', () => {
      let groupId: number;
      beforeAll(async () => {
        const rows = await t.sql<{ id: number }>(
          `INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level)
           VALUES ('Wonderland Group', 'wonderland', 'group', NULL, '', 0) RETURNING id`,
        );
        groupId = Number(rows[0].id);
      });

      it('sees all namespaces, newest first', async () => {
        const res = await t.http.get('/api/v3/namespaces?per_page=100').set('PRIVATE-TOKEN', t.root.token).expect(200);
        const all = await t.sql<{ id: number }>('SELECT id FROM namespaces ORDER BY id DESC');
        expect(res.body.map((n: { id: number }) => n.id)).toEqual(all.map((r) => Number(r.id)));
        expect(res.headers['x-total']).toBe(String(all.length));
        const paths = res.body.map((n: { path: string }) => n.path);
        expect(paths).toEqual(expect.arrayContaining(['root', 'alice', 'bob_builder', 'wonderland']));
        expect(res.body.find((n: { id: number }) => n.id === groupId)).toEqual({ id: groupId, path: 'wonderland', kind: 'group' });
        for (const n of res.body) expect(Object.keys(n).sort()).toEqual(['id', 'kind', 'path']);
      });

      it('the normal user still does not see the group it is not a member of', async () => {
        const res = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', alice.token).expect(200);
        expect(res.body.map((n: { path: string }) => n.path)).toEqual(['alice']);
      });

      it('search matches the path, case-insensitively', async () => {
        const res = await t.http.get('/api/v3/namespaces?search=ALI').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body.map((n: { path: string }) => n.path)).toEqual(['alice']);
      });

      it('search matches the name', async () => {
        const res = await t.http.get('/api/v3/namespaces?search=wonderland%20gr').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body).toEqual([{ id: groupId, path: 'wonderland', kind: 'group' }]);
      });

      it('search treats LIKE wildcards literally', async () => {
        let res = await t.http.get('/api/v3/namespaces?search=_').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body.map((n: { path: string }) => n.path)).toEqual(['bob_builder']);
        res = await t.http.get('/api/v3/namespaces?search=%25').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body).toEqual([]);
      });

      it('search with no match is an empty page', async () => {
        const res = await t.http.get('/api/v3/namespaces?search=zzz-no-such').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body).toEqual([]);
        expect(res.headers['x-total']).toBe('0');
        expect(res.headers['x-total-pages']).toBe('0');
      });

      it('is paginated with the X-* and Link headers', async () => {
        const all = await t.sql<{ id: number }>('SELECT id FROM namespaces ORDER BY id DESC');
        const total = all.length;
        expect(total).toBeGreaterThanOrEqual(4);
        const res = await t.http.get('/api/v3/namespaces?per_page=2&page=2').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.body.map((n: { id: number }) => n.id)).toEqual(all.slice(2, 4).map((r) => Number(r.id)));
        const pages = Math.ceil(total / 2);
        expect(res.headers).toMatchObject({
          'x-total': String(total),
          'x-total-pages': String(pages),
          'x-per-page': '2',
          'x-page': '2',
          'x-prev-page': '1',
          'x-next-page': pages > 2 ? '3' : '',
        });
        const base = `${EXTERNAL_URL}/api/v3/namespaces`;
        const links = [`<${base}?page=1&per_page=2>; rel="prev"`];
        if (pages > 2) links.push(`<${base}?page=3&per_page=2>; rel="next"`);
        links.push(`<${base}?page=1&per_page=2>; rel="first"`, `<${base}?page=${pages}&per_page=2>; rel="last"`);
        expect(res.headers['link']).toBe(links.join(', '));
      });

      it('a normal user also sees the groups it is a member of, and only those', async () => {
        const group = await t.http.post('/api/v3/groups').set('PRIVATE-TOKEN', t.root.token).send({ name: 'Tea Party', path: 'tea-party' }).expect(201);
        await t.http
          .post(`/api/v3/groups/${group.body.id}/members`)
          .set('PRIVATE-TOKEN', t.root.token)
          .send({ user_id: alice.id, access_level: 30 })
          .expect(201);
        const res = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', alice.token).expect(200);
        expect(res.body.map((n: { path: string; kind: string }) => [n.path, n.kind])).toEqual([
          ['tea-party', 'group'],
          ['alice', 'user'],
        ]);
        expect(res.headers['x-total']).toBe('2');
        const searched = await t.http.get('/api/v3/namespaces?search=tea').set('PRIVATE-TOKEN', alice.token).expect(200);
        expect(searched.body.map((n: { path: string }) => n.path)).toEqual(['tea-party']);
        const other = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', bob.token).expect(200);
        expect(other.body.map((n: { path: string }) => n.path)).toEqual(['bob_builder']);
      });

      it('pagination headers also come on the default page', async () => {
        const res = await t.http.get('/api/v3/namespaces').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(res.headers['x-page']).toBe('1');
        expect(res.headers['x-per-page']).toBe('20');
        expect(res.headers['x-prev-page']).toBe('');
        expect(res.headers['link']).toContain('rel="first"');
      });
    });
  });
});
