import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Test } from 'supertest';
import { GitService } from '../src/git/git.service';
import { Repository } from '../src/git/repository';
import { binaryParser, GitCli } from './helpers/git-cli';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const SHA = /^[0-9a-f]{40}$/;

type Json = Record<string, any>;

/** A commit's identity and dates, for `git commit`. */
const who = (name: string, email: string, date: string) => ({
  GIT_AUTHOR_NAME: name,
  GIT_AUTHOR_EMAIL: email,
  GIT_AUTHOR_DATE: date,
  GIT_COMMITTER_NAME: name,
  GIT_COMMITTER_EMAIL: email,
  GIT_COMMITTER_DATE: date,
});
const ANN = (date: string) => who('Ann Author', 'ann@example.com', date);
const BEN = (date: string) => who('Ben Builder', 'ben@example.com', date);

const README_1 = '# Repo\nline 2\nline 3\n';
const README_3 = '# Repo\nline 2 changed\nline 3\nline 4\n';
const LOGO = Buffer.from([...Array(256).keys()].map((i) => (i * 7) % 256).concat([0, 0, 255, 137, 80, 78, 71]));

/**
 * The repository API over HTTP against a real repository: history made with the git CLI (fixed
 * authors and dates) and pushed over smart HTTP, so the first push sets up the default branch.
 *
 * History:  c1 ─ c2 ─ c3 (master)      c1: zeta, tag v0.1     c2: fix/nested
 *                        └ c4 ─ c5 (feature)
 */
describe('repository API', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let work: string;
  let alice: TestUser; // owner
  let bob: TestUser; // developer
  let carol: TestUser; // reporter
  let gina: TestUser; // guest
  let ollie: TestUser; // non-member
  let project: Json;
  let P: string; // `${API}/projects/:id`
  let R: string; // `${P}/repository`
  let c1: string, c2: string, c3: string, c4: string, c5: string;
  let pwned: string;

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const get = (u: TestUser, path: string) => as(u, t.http.get(path));
  const bytes = (req: Test) => req.buffer(true).parse(binaryParser);

  async function branchTip(name: string): Promise<string | null> {
    const res = await get(alice, `${R}/branches/${encodeURIComponent(name)}`);
    return res.status === 200 ? res.body.commit.id : null;
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-repo-api-'));
    pwned = join(tmp, 'pwned');
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.com' });
    bob = await t.createUser({ username: 'bob', name: 'Bob Developer', email: 'bob@example.com' });
    carol = await t.createUser({ username: 'carol', name: 'Carol Reporter', email: 'carol@example.com' });
    gina = await t.createUser({ username: 'gina', name: 'Gina Guest', email: 'gina@example.com' });
    ollie = await t.createUser({ username: 'ollie', name: 'Ollie Outsider', email: 'ollie@example.com' });
    project = (
      await as(alice, t.http.post(`${API}/projects`))
        .send({ name: 'repo', visibility_level: 0 })
        .expect(201)
    ).body;
    P = `${API}/projects/${project.id}`;
    R = `${P}/repository`;
    for (const [u, level] of [
      [bob, 30],
      [carol, 20],
      [gina, 10],
    ] as const) {
      await as(alice, t.http.post(`${P}/members`))
        .send({ user_id: u.id, access_level: level })
        .expect(201);
    }

    work = join(tmp, 'work');
    mkdirSync(work);
    await cli.ok(['init', '-q', work]);
    c1 = await cli.commit(work, { 'README.md': README_1 }, 'Initial commit', ANN('2020-01-01T10:00:00Z'));
    await cli.ok(['branch', 'zeta'], work);
    await cli.ok(['tag', 'v0.1'], work);
    c2 = await cli.commit(
      work,
      { 'docs/guide.md': 'guide\n', 'src/app.js': 'console.log(1);\n', 'bin/logo.bin': LOGO },
      'Add docs, app and logo',
      BEN('2020-02-01T12:00:00+02:00'),
    );
    await cli.ok(['branch', 'fix/nested'], work);
    c3 = await cli.commit(work, { 'README.md': README_3 }, 'Update README\n\nWith a body.', ANN('2020-03-01T10:00:00Z'));
    await cli.ok(['checkout', '-q', '-b', 'feature'], work);
    c4 = await cli.commit(work, { 'feature.txt': 'feature\n' }, 'Add feature', ANN('2020-04-01T10:00:00Z'));
    c5 = await cli.commit(work, { 'feature.txt': 'feature\nmore\n' }, 'Extend feature', BEN('2020-04-02T10:00:00Z'));
    await cli.ok(['checkout', '-q', 'master'], work);
    await cli.ok(['remote', 'add', 'origin', cli.url('alice/repo', 'alice', alice.token)], work);
    await cli.ok(['push', '-q', 'origin', 'master', 'feature', 'fix/nested', 'zeta', 'refs/tags/v0.1'], work);
  });

  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  // ------------------------------------------------------------------ branches

  describe('branches', () => {
    it('lists branches sorted by name, with the raw commit shape and protection', async () => {
      const res = await get(alice, `${R}/branches`).expect(200);
      await expectSchema(res, 'Branch[]');
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.map((b: Json) => b.name)).toEqual(['feature', 'fix/nested', 'master', 'zeta']);
      const master = res.body.find((b: Json) => b.name === 'master');
      expect(master).toEqual({
        name: 'master',
        protected: true, // the first push protected the default branch
        developers_can_push: true,
        developers_can_merge: false,
        commit: {
          id: c3,
          message: 'Update README\n\nWith a body.\n',
          parent_ids: [c2],
          authored_date: '2020-03-01T10:00:00.000+00:00',
          author_name: 'Ann Author',
          author_email: 'ann@example.com',
          committed_date: '2020-03-01T10:00:00.000+00:00',
          committer_name: 'Ann Author',
          committer_email: 'ann@example.com',
        },
      });
      expect(res.body.find((b: Json) => b.name === 'fix/nested')).toMatchObject({
        protected: false,
        commit: { id: c2, authored_date: '2020-02-01T12:00:00.000+02:00', author_name: 'Ben Builder' },
      });
    });

    it('pages branches by name when per_page is given, with the commits of the page and the whole count', async () => {
      const whole = (await get(alice, `${R}/branches`).expect(200)).body as Json[];
      const res = await get(alice, `${R}/branches?per_page=2&page=2`).expect(200);
      expect(res.body.map((b: Json) => b.name)).toEqual(['master', 'zeta']);
      expect(res.body).toEqual(whole.slice(2, 4));
      expect(res.headers['x-total']).toBe('4');
      expect(res.headers['x-total-pages']).toBe('2');
      expect(res.headers['x-page']).toBe('2');
      expect((await get(alice, `${R}/branches?per_page=2&page=3`).expect(200)).body).toEqual([]);
    });

    it('gets a branch by name, with `/` raw or as %2F; unknown → 404 Branch Not Found', async () => {
      for (const path of ['fix/nested', 'fix%2Fnested', 'fix%2fnested']) {
        const res = await get(bob, `${R}/branches/${path}`).expect(200);
        await expectSchema(res, 'Branch');
        expect(res.body).toMatchObject({ name: 'fix/nested', protected: false, commit: { id: c2 } });
      }
      const res = await get(bob, `${R}/branches/nope`).expect(404);
      expect(res.body).toEqual({ message: '404 Branch Not Found' });
      expect((await get(bob, `${R}/branches/fix%2Fnope`).expect(404)).body.message).toBe('404 Branch Not Found');
    });

    it('protect and unprotect are idempotent (master+); developers 403; unknown branch 404', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await as(alice, t.http.put(`${R}/branches/zeta/protect`)).expect(200);
        expect(res.body).toMatchObject({ name: 'zeta', protected: true, developers_can_push: false, commit: { id: c1 } });
      }
      expect((await get(bob, `${R}/branches/zeta`).expect(200)).body.protected).toBe(true);
      for (let i = 0; i < 2; i++) {
        const res = await as(alice, t.http.put(`${R}/branches/zeta/unprotect`)).expect(200);
        expect(res.body).toMatchObject({ name: 'zeta', protected: false });
      }
      // a slashed name, %2F-encoded
      expect((await as(alice, t.http.put(`${R}/branches/fix%2Fnested/protect`)).expect(200)).body).toMatchObject({ name: 'fix/nested', protected: true });
      expect((await as(alice, t.http.put(`${R}/branches/fix/nested/unprotect`)).expect(200)).body).toMatchObject({ name: 'fix/nested', protected: false });
      // developers_can_push on protect
      const dev = await as(alice, t.http.put(`${R}/branches/zeta/protect`))
        .send({ developers_can_push: true })
        .expect(200);
      expect(dev.body).toMatchObject({ protected: true, developers_can_push: true });
      await as(alice, t.http.put(`${R}/branches/zeta/unprotect`)).expect(200);

      expect((await as(bob, t.http.put(`${R}/branches/zeta/protect`)).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await as(bob, t.http.put(`${R}/branches/master/unprotect`)).expect(403);
      expect((await as(alice, t.http.put(`${R}/branches/nope/protect`)).expect(404)).body).toEqual({ message: '404 Branch Not Found' });
      expect((await as(alice, t.http.put(`${R}/branches/nope/unprotect`)).expect(404)).body).toEqual({ message: '404 Branch Not Found' });
      expect((await get(alice, `${R}/branches/master`)).body.protected).toBe(true);
    });

    it('creates a branch from a branch, a SHA or a tag (201)', async () => {
      let res = await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'from-branch', ref: 'feature' })
        .expect(201);
      expect(res.body).toMatchObject({ name: 'from-branch', protected: false, commit: { id: c5, parent_ids: [c4] } });
      res = await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'from/sha', ref: c2 })
        .expect(201);
      expect(res.body).toMatchObject({ name: 'from/sha', commit: { id: c2 } });
      res = await as(bob, t.http.post(`${R}/branches`))
        .query({ branch_name: 'from-tag', ref: 'v0.1' })
        .expect(201);
      expect(res.body).toMatchObject({ name: 'from-tag', commit: { id: c1 } });
      expect(await branchTip('from/sha')).toBe(c2);
      const names = (await get(bob, `${R}/branches`)).body.map((b: Json) => b.name);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining(['from-branch', 'from/sha', 'from-tag']));
    });

    it('branch creation errors: 400 with GitLab messages, reporter 403', async () => {
      const post = (u: TestUser, body: Json) => as(u, t.http.post(`${R}/branches`)).send(body);
      expect((await post(bob, { branch_name: 'bad name', ref: 'master' }).expect(400)).body).toEqual({ message: '400 Branch name is invalid' });
      for (const name of ['a..b', 'x.lock', '-x', 'a~1', 'ends/', 'q?', 'HEAD@{1}']) {
        expect([name, (await post(bob, { branch_name: name, ref: 'master' })).body]).toEqual([name, { message: '400 Branch name is invalid' }]);
      }
      expect((await post(bob, { branch_name: 'master', ref: 'feature' }).expect(400)).body).toEqual({ message: '400 Branch already exists' });
      expect((await post(bob, { branch_name: 'brand-new', ref: 'no-such-ref' }).expect(400)).body).toEqual({ message: '400 Invalid reference name' });
      expect((await post(bob, { branch_name: 'brand-new', ref: 'f'.repeat(40) }).expect(400)).body).toEqual({ message: '400 Invalid reference name' });
      expect((await post(bob, { ref: 'master' }).expect(400)).body).toEqual({ message: '400 (Bad request) "branch_name" not given' });
      expect((await post(bob, { branch_name: 'brand-new' }).expect(400)).body).toEqual({ message: '400 (Bad request) "ref" not given' });
      expect((await post(carol, { branch_name: 'by-reporter', ref: 'master' }).expect(403)).body).toEqual({ message: '403 Forbidden' });
      expect(await branchTip('brand-new')).toBeNull();
      expect(await branchTip('by-reporter')).toBeNull();
    });

    it('deletes a branch (200 {branch_name}); 404 No such branch; 400 for HEAD and protected branches (spec: 400 otherwise)', async () => {
      await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'doomed/one', ref: 'master' })
        .expect(201);
      await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'doomed-two', ref: 'master' })
        .expect(201);
      expect((await as(carol, t.http.delete(`${R}/branches/doomed-two`)).expect(403)).body).toEqual({ message: '403 Forbidden' });
      expect((await as(bob, t.http.delete(`${R}/branches/doomed%2Fone`)).expect(200)).body).toEqual({ branch_name: 'doomed/one' });
      expect((await as(bob, t.http.delete(`${R}/branches/doomed-two`)).expect(200)).body).toEqual({ branch_name: 'doomed-two' });
      expect(await branchTip('doomed/one')).toBeNull();
      expect(await branchTip('doomed-two')).toBeNull();
      expect((await as(bob, t.http.delete(`${R}/branches/doomed-two`)).expect(404)).body).toEqual({ message: '404 Branch Not Found' });
      expect((await as(alice, t.http.delete(`${R}/branches/master`)).expect(400)).body).toEqual({ message: '400 Cannot remove HEAD branch' });
      await as(alice, t.http.put(`${R}/branches/zeta/protect`)).expect(200);
      try {
        expect((await as(alice, t.http.delete(`${R}/branches/zeta`)).expect(400)).body).toEqual({ message: '400 Protected branch cant be removed' });
        expect(await branchTip('zeta')).toBe(c1);
      } finally {
        await as(alice, t.http.put(`${R}/branches/zeta/unprotect`)).expect(200);
      }
      expect(await branchTip('master')).toBe(c3);
    });
  });

  // ------------------------------------------------------------------ tags and releases

  describe('tags and releases', () => {
    it('creates a lightweight tag (message null) and an annotated one with a release description (201)', async () => {
      let res = await as(bob, t.http.post(`${R}/tags`))
        .send({ tag_name: 'v1.0', ref: 'master' })
        .expect(201);
      expect(res.body).toEqual({
        name: 'v1.0',
        message: null,
        release: null,
        commit: expect.objectContaining({ id: c3, parent_ids: [c2], author_email: 'ann@example.com', committer_name: 'Ann Author' }),
      });
      res = await as(bob, t.http.post(`${R}/tags`))
        .send({ tag_name: 'v2.0', ref: c5, message: 'Release 2.0\n\nNotes inside.', release_description: '## Notes' })
        .expect(201);
      expect(res.body).toMatchObject({
        name: 'v2.0',
        message: 'Release 2.0\n\nNotes inside.',
        commit: { id: c5 },
        release: { tag_name: 'v2.0', description: '## Notes' },
      });
      // from a tag name
      res = await as(bob, t.http.post(`${R}/tags`))
        .send({ tag_name: 'v0.1.1', ref: 'v0.1' })
        .expect(201);
      expect(res.body).toMatchObject({ name: 'v0.1.1', message: null, commit: { id: c1 } });
      // the annotated tag really is a tag object in git
      await cli.ok(['fetch', '-q', 'origin', '--tags'], work);
      expect((await cli.ok(['cat-file', '-t', 'v2.0'], work)).trim()).toBe('tag');
      expect((await cli.ok(['cat-file', '-t', 'v1.0'], work)).trim()).toBe('commit');
      const tagObject = await cli.ok(['cat-file', 'tag', 'v2.0'], work);
      expect(tagObject).toContain('tagger Bob Developer <bob@example.com>');
    });

    it('lists tags reverse-alphabetically with messages and releases', async () => {
      const res = await get(carol, `${R}/tags`).expect(200);
      await expectSchema(res, 'Tag[]');
      expect(res.body.map((x: Json) => x.name)).toEqual(['v2.0', 'v1.0', 'v0.1.1', 'v0.1']);
      expect(res.body[0]).toMatchObject({ message: 'Release 2.0\n\nNotes inside.', release: { tag_name: 'v2.0', description: '## Notes' } });
      expect(res.body[3]).toMatchObject({ name: 'v0.1', message: null, release: null, commit: { id: c1 } });
      const paged = await get(carol, `${R}/tags?per_page=2&page=2`).expect(200);
      expect(paged.body).toEqual(res.body.slice(2, 4));
      expect([paged.headers['x-total'], paged.headers['x-total-pages'], paged.headers['x-page']]).toEqual(['4', '2', '2']);
    });

    it('gets one tag; unknown → 404', async () => {
      expect((await get(carol, `${R}/tags/v2.0`).expect(200)).body).toMatchObject({ name: 'v2.0', commit: { id: c5 } });
      expect((await get(carol, `${R}/tags/nope`).expect(404)).body).toEqual({ message: '404 Tag Not Found' });
    });

    it('tag creation failures answer 405 with a message; missing tag_name 400; reporter 403', async () => {
      const post = (u: TestUser, body: Json) => as(u, t.http.post(`${R}/tags`)).send(body);
      expect((await post(bob, { tag_name: 'v1.0', ref: 'master' }).expect(405)).body).toEqual({ message: '405 Tag v1.0 already exists' });
      expect((await post(bob, { tag_name: 'v9', ref: 'no-such-ref' }).expect(405)).body).toEqual({ message: '405 Target no-such-ref is invalid' });
      expect((await post(bob, { tag_name: 'bad tag', ref: 'master' }).expect(405)).body).toEqual({ message: '405 Tag name invalid' });
      expect((await post(bob, { ref: 'master' }).expect(400)).body).toEqual({ message: '400 (Bad request) "tag_name" not given' });
      expect((await post(carol, { tag_name: 'v9', ref: 'master' }).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await get(carol, `${R}/tags/v9`).expect(404);
    });

    it('deletes a tag (200 {tag_name}), masters only (developers 403, as GitLab 8); again → 404 No such tag', async () => {
      await as(bob, t.http.post(`${R}/tags`))
        .send({ tag_name: 'tmp/tag', ref: 'master', message: 'temporary' })
        .expect(201);
      await as(carol, t.http.delete(`${R}/tags/tmp%2Ftag`)).expect(403);
      expect((await as(bob, t.http.delete(`${R}/tags/tmp%2Ftag`)).expect(403)).body).toEqual({
        message: '403 You are not allowed to change existing tags on this project.',
      });
      expect((await as(alice, t.http.delete(`${R}/tags/tmp%2Ftag`)).expect(200)).body).toEqual({ tag_name: 'tmp/tag' });
      await get(bob, `${R}/tags/tmp%2Ftag`).expect(404);
      expect((await as(alice, t.http.delete(`${R}/tags/tmp%2Ftag`)).expect(404)).body).toEqual({ message: '404 Tag Not Found' });
    });

    it('releases: POST 201 / 404 Tag does not exist / 409 Release already exists; PUT 200 / 404', async () => {
      let res = await as(bob, t.http.post(`${R}/tags/v1.0/release`))
        .send({ description: 'First release' })
        .expect(201);
      await expectSchema(res, 'Release');
      expect(res.body).toEqual({ tag_name: 'v1.0', description: 'First release' });
      expect(
        (
          await as(bob, t.http.post(`${R}/tags/v1.0/release`))
            .send({ description: 'again' })
            .expect(409)
        ).body,
      ).toEqual({ message: '409 Release already exists' });
      expect(
        (
          await as(bob, t.http.post(`${R}/tags/nope/release`))
            .send({ description: 'x' })
            .expect(404)
        ).body,
      ).toEqual({ message: '404 Tag Not Found' });
      expect(
        (
          await as(bob, t.http.post(`${R}/tags/v0.1/release`))
            .send({})
            .expect(400)
        ).body,
      ).toEqual({ message: '400 (Bad request) "description" not given' });
      await as(carol, t.http.post(`${R}/tags/v0.1/release`))
        .send({ description: 'x' })
        .expect(403);

      res = await as(bob, t.http.put(`${R}/tags/v1.0/release`))
        .send({ description: 'Updated notes' })
        .expect(200);
      expect(res.body).toEqual({ tag_name: 'v1.0', description: 'Updated notes' });
      expect((await get(carol, `${R}/tags/v1.0`)).body.release).toEqual({ tag_name: 'v1.0', description: 'Updated notes' });
      expect(
        (
          await as(bob, t.http.put(`${R}/tags/v0.1/release`))
            .send({ description: 'x' })
            .expect(404)
        ).body,
      ).toEqual({ message: '404 Release Not Found' });
      expect(
        (
          await as(bob, t.http.put(`${R}/tags/nope/release`))
            .send({ description: 'x' })
            .expect(404)
        ).body,
      ).toEqual({ message: '404 Tag Not Found' });
    });
  });

  // ------------------------------------------------------------------ commits

  describe('commits', () => {
    it('lists the default branch newest first, in the RepoCommit shape', async () => {
      const res = await get(carol, `${R}/commits`).expect(200);
      await expectSchema(res, 'Commit[]');
      expect(res.body.map((c: Json) => c.id)).toEqual([c3, c2, c1]);
      expect(res.body[0]).toEqual({
        id: c3,
        short_id: c3.slice(0, 8),
        title: 'Update README',
        author_name: 'Ann Author',
        author_email: 'ann@example.com',
        created_at: '2020-03-01T10:00:00.000+00:00',
        message: 'Update README\n\nWith a body.\n',
        parent_ids: [c2],
        allow_failure: false, // the spec's Commit "in lists"
      });
      expect(res.body[1]).toMatchObject({ author_name: 'Ben Builder', created_at: '2020-02-01T12:00:00.000+02:00', parent_ids: [c1] });
      expect(res.body[2].parent_ids).toEqual([]);
      for (const c of res.body) expect(c.short_id).toMatch(/^[0-9a-f]{8}$/);
      expect(res.headers['x-total']).toBe('3');
    });

    it('ref_name selects a branch, a tag or a SHA; an unknown ref gives an empty list', async () => {
      expect((await get(carol, `${R}/commits`).query({ ref_name: 'feature' })).body.map((c: Json) => c.id)).toEqual([c5, c4, c3, c2, c1]);
      expect((await get(carol, `${R}/commits`).query({ ref_name: 'v0.1' })).body.map((c: Json) => c.id)).toEqual([c1]);
      expect((await get(carol, `${R}/commits`).query({ ref_name: c2 })).body.map((c: Json) => c.id)).toEqual([c2, c1]);
      expect((await get(carol, `${R}/commits`).query({ ref_name: 'fix/nested' })).body.map((c: Json) => c.id)).toEqual([c2, c1]);
      const none = await get(carol, `${R}/commits`).query({ ref_name: 'no-such-branch' }).expect(200);
      expect(none.body).toEqual([]);
      // not a ref name at all: refused
      for (const bad of ['--all', 'master..feature', 'master\0', 'a b']) {
        const res = await get(carol, `${R}/commits`).query({ ref_name: bad });
        expect([bad, res.status, res.body]).toEqual([bad, 400, { message: '400 (Bad request) "ref_name" is invalid' }]);
      }
    });

    it('since and until are inclusive; a bad timestamp is 400', async () => {
      const ids = async (q: Json) =>
        (
          await get(carol, `${R}/commits`)
            .query({ ref_name: 'feature', ...q })
            .expect(200)
        ).body.map((c: Json) => c.id);
      expect(await ids({ since: '2020-02-01T10:00:00Z' })).toEqual([c5, c4, c3, c2]);
      expect(await ids({ until: '2020-02-01T10:00:00Z' })).toEqual([c2, c1]);
      expect(await ids({ since: '2020-02-01T10:00:00Z', until: '2020-02-01T10:00:00Z' })).toEqual([c2]);
      expect(await ids({ since: '2020-03-01T10:00:00Z', until: '2020-04-01T10:00:00Z' })).toEqual([c4, c3]);
      expect(await ids({ since: '2020-04-02T10:00:01Z' })).toEqual([]);
      expect(await ids({ since: '2020-01-31T00:00:00.000Z', until: '2020-03-01T09:59:59Z' })).toEqual([c2]);
      for (const bad of ['yesterday', '2020-13-45T99:00:00Z', 'x']) {
        const res = await get(carol, `${R}/commits`).query({ since: bad }).expect(400);
        expect(res.body).toEqual({ message: '400 "since" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ' });
      }
      expect((await get(carol, `${R}/commits`).query({ until: 'soon' }).expect(400)).body.message).toMatch(/^400 "until" must be a timestamp/);
    });

    it('is paginated with the spec headers; huge per_page is capped and a huge page is empty', async () => {
      let res = await get(carol, `${R}/commits`).query({ ref_name: 'feature', per_page: 2 }).expect(200);
      expect(res.body.map((c: Json) => c.id)).toEqual([c5, c4]);
      expect(res.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-per-page': '2', 'x-page': '1', 'x-next-page': '2', 'x-prev-page': '' });
      expect(res.headers.link).toContain('rel="next"');
      expect(res.headers.link).toContain('rel="last"');
      expect(res.headers.link).not.toContain('private_token');
      res = await get(carol, `${R}/commits`).query({ ref_name: 'feature', per_page: 2, page: 3 }).expect(200);
      expect(res.body.map((c: Json) => c.id)).toEqual([c1]);
      expect(res.headers['x-next-page']).toBe('');
      expect(res.headers['x-prev-page']).toBe('2');
      res = await get(carol, `${R}/commits`).query({ ref_name: 'feature', per_page: 100000000 }).expect(200);
      expect(res.body).toHaveLength(5);
      expect(res.headers['x-per-page']).toBe('100');
      for (const page of ['99999999999999999999999', '1000000000', String(Number.MAX_SAFE_INTEGER)]) {
        res = await get(carol, `${R}/commits`).query({ ref_name: 'feature', page, per_page: 100 }).expect(200);
        expect(res.body).toEqual([]);
      }
      for (const q of [{ page: '-5' }, { per_page: '-1' }, { per_page: 'lots' }, { page: '1e999' }]) {
        res = await get(carol, `${R}/commits`).query(q);
        expect([q, res.status]).toEqual([q, 200]);
      }
    });

    it('one commit by SHA, short SHA, branch or tag (RepoCommitDetail); unknown → 404 Commit Not Found', async () => {
      const res = await get(carol, `${R}/commits/${c2}`).expect(200);
      await expectSchema(res, 'CommitDetail');
      expect(res.body).toEqual({
        id: c2,
        short_id: c2.slice(0, 8),
        title: 'Add docs, app and logo',
        author_name: 'Ben Builder',
        author_email: 'ben@example.com',
        created_at: '2020-02-01T12:00:00.000+02:00',
        message: 'Add docs, app and logo\n',
        parent_ids: [c1],
        committed_date: '2020-02-01T12:00:00.000+02:00',
        authored_date: '2020-02-01T12:00:00.000+02:00',
        status: null,
      });
      expect((await get(carol, `${R}/commits/${c2.slice(0, 10)}`).expect(200)).body.id).toBe(c2);
      expect((await get(carol, `${R}/commits/master`).expect(200)).body.id).toBe(c3);
      expect((await get(carol, `${R}/commits/feature`).expect(200)).body.id).toBe(c5);
      expect((await get(carol, `${R}/commits/fix%2Fnested`).expect(200)).body.id).toBe(c2);
      expect((await get(carol, `${R}/commits/v0.1`).expect(200)).body.id).toBe(c1);
      expect((await get(carol, `${R}/commits/v2.0`).expect(200)).body.id).toBe(c5); // annotated tag peeled
      for (const bad of ['deadbeef', 'f'.repeat(40), 'no-such-branch', 'master~1', 'master^', `${c3}..${c1}`]) {
        const r = await get(carol, `${R}/commits/${encodeURIComponent(bad)}`);
        expect([bad, r.status, r.body]).toEqual([bad, 404, { message: '404 Commit Not Found' }]);
      }
    });

    it("a commit's diff: one entry per file; a root commit; unknown → 404", async () => {
      let res = await get(carol, `${R}/commits/${c3}/diff`).expect(200);
      await expectSchema(res, 'DiffEntry[]');
      expect(res.body).toHaveLength(1);
      expect(res.body[0]).toMatchObject({
        old_path: 'README.md',
        new_path: 'README.md',
        a_mode: '100644',
        b_mode: '100644',
        new_file: false,
        renamed_file: false,
        deleted_file: false,
      });
      expect(res.body[0].diff).toContain('@@ -1,3 +1,4 @@');
      expect(res.body[0].diff).toContain('-line 2\n+line 2 changed\n line 3\n+line 4');
      res = await get(carol, `${R}/commits/${c2}/diff`).expect(200);
      expect(res.body.map((d: Json) => d.new_path).sort()).toEqual(['bin/logo.bin', 'docs/guide.md', 'src/app.js']);
      for (const d of res.body) expect(d).toMatchObject({ new_file: true, deleted_file: false, b_mode: '100644' });
      expect(res.body.find((d: Json) => d.new_path === 'src/app.js').diff).toContain('+console.log(1);');
      res = await get(carol, `${R}/commits/v0.1/diff`).expect(200);
      expect(res.body).toEqual([expect.objectContaining({ new_path: 'README.md', new_file: true, diff: expect.stringContaining('+# Repo') })]);
      expect((await get(carol, `${R}/commits/${'a'.repeat(40)}/diff`).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
    });

    it('comments: general (path/line null), on a line of the diff with the full SHA, otherwise general', async () => {
      const post = (sha: string, body: Json, u: TestUser = alice) => as(u, t.http.post(`${R}/commits/${sha}/comments`)).send(body);
      let res = await post(c3, { note: 'Looks good' }).expect(201);
      expect(res.body).toMatchObject({ note: 'Looks good', path: null, line: null, line_type: null, author: { username: 'alice', id: alice.id } });
      expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);

      res = await post(c3, { note: 'on the new line 2', path: 'README.md', line: 2, line_type: 'new' }).expect(201);
      expect(res.body).toMatchObject({ path: 'README.md', line: 2, line_type: 'new' });
      res = await post(c3, { note: 'on the old line 2', path: 'README.md', line: 2, line_type: 'old' }).expect(201);
      expect(res.body).toMatchObject({ path: 'README.md', line: 2, line_type: 'old' });

      // not attached to a line: a branch instead of the full SHA, a line or path that is not in the diff
      for (const [sha, extra] of [
        ['master', { path: 'README.md', line: 2, line_type: 'new' }],
        [c3, { path: 'README.md', line: 99, line_type: 'new' }],
        [c3, { path: 'nope.md', line: 1, line_type: 'new' }],
        [c3, { path: 'README.md', line: 2, line_type: 'sideways' }],
        [c3, { path: 'README.md', line: 2 }],
      ] as [string, Json][]) {
        res = await post(sha, { note: 'general', ...extra }).expect(201);
        expect([extra, res.body.path, res.body.line, res.body.line_type]).toEqual([extra, null, null, null]);
      }
      res = await post(c3, { note: 'by a reporter' }, carol).expect(201);
      expect(res.body.author.username).toBe('carol');
      expect((await post(c3, {}).expect(400)).body).toEqual({ message: '400 (Bad request) "note" not given' });
      expect((await post('f'.repeat(40), { note: 'x' }).expect(404)).body).toEqual({ message: '404 Commit Not Found' });

      const list = await get(carol, `${R}/commits/${c3}/comments`).expect(200);
      await expectSchema(list, 'CommitComment[]');
      expect(list.body.map((c: Json) => c.note)).toEqual([
        'Looks good',
        'on the new line 2',
        'on the old line 2',
        'general',
        'general',
        'general',
        'general',
        'general',
        'by a reporter',
      ]);
      expect(list.headers['x-total']).toBe('9');
      expect((await get(carol, `${R}/commits/master/comments`)).body).toHaveLength(9); // by branch name too
      expect((await get(carol, `${R}/commits/${c2}/comments`).expect(200)).body).toEqual([]);
    });

    it('commit comment and status authors are author objects: created_at always, email for administrators only (decision 18)', async () => {
      const comment = await as(bob, t.http.post(`${R}/commits/${c1}/comments`))
        .send({ note: 'author shape' })
        .expect(201);
      expect(comment.body.author).toEqual({
        name: expect.any(String),
        username: 'bob',
        id: bob.id,
        state: 'active',
        avatar_url: expect.anything(),
        web_url: expect.any(String),
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
      await as(bob, t.http.post(`${P}/statuses/${c1}`))
        .send({ state: 'success', name: 'author-shape' })
        .expect(201);
      const root = t.root;
      for (const [viewer, withEmail] of [
        [carol, false],
        [root, true],
      ] as const) {
        const comments = (await as(viewer, t.http.get(`${R}/commits/${c1}/comments?per_page=100`)).expect(200)).body as Json[];
        const statuses = (await as(viewer, t.http.get(`${R}/commits/${c1}/statuses?all=true&per_page=100`)).expect(200)).body as Json[];
        for (const author of [comments.find((c) => c.note === 'author shape')!.author, statuses.find((s) => s.name === 'author-shape')!.author]) {
          expect(author).toMatchObject({ username: 'bob', created_at: expect.stringMatching(/^\d{4}-/) });
          if (withEmail) expect(author.email).toBe(bob.email);
          else expect(author).not.toHaveProperty('email');
        }
      }
    });

    describe('statuses', () => {
      it('POST adds a status (201): name defaults to `default`, ref to a branch holding the commit', async () => {
        const res = await as(bob, t.http.post(`${P}/statuses/${c3}`))
          .send({ state: 'success' })
          .expect(201);
        expect(res.body).toMatchObject({
          id: expect.any(Number),
          sha: c3,
          ref: 'master',
          status: 'success',
          name: 'default',
          target_url: null,
          description: null,
          allow_failure: false,
          started_at: null,
          author: { username: 'bob' },
        });
        expect(res.body.finished_at).not.toBeNull();
        expect((await get(carol, `${R}/commits/${c3}`)).body.status).toBe('success');
      });

      it('adds with context/name, ref, target_url and description; updates a pending or running one', async () => {
        const post = (body: Json) => as(bob, t.http.post(`${P}/statuses/${c3}`)).send(body);
        const pending = await post({
          state: 'pending',
          context: 'ci/build',
          ref: 'master',
          target_url: 'https://ci.example.com/1',
          description: 'queued',
        }).expect(201);
        expect(pending.body).toMatchObject({
          name: 'ci/build',
          status: 'pending',
          ref: 'master',
          target_url: 'https://ci.example.com/1',
          description: 'queued',
          finished_at: null,
        });
        expect((await get(carol, `${R}/commits/${c3}`)).body.status).toBe('running'); // one success + one pending
        const running = await post({ state: 'running', name: 'ci/build', ref: 'master' }).expect(201);
        expect(running.body).toMatchObject({ id: pending.body.id, status: 'running', description: 'queued' });
        expect(running.body.started_at).not.toBeNull();
        const done = await post({ state: 'success', name: 'ci/build', ref: 'master', description: 'passed' }).expect(201);
        expect(done.body).toMatchObject({ id: pending.body.id, status: 'success', description: 'passed' });
        // a finished status is not updated: a new one is added
        const again = await post({ state: 'failed', name: 'ci/build', ref: 'master' }).expect(201);
        expect(again.body.id).toBeGreaterThan(done.body.id);
        expect((await get(carol, `${R}/commits/${c3}`)).body.status).toBe('failed');
        await post({ state: 'success', name: 'ci/build', ref: 'master' }).expect(201);
        expect((await get(carol, `${R}/commits/${c3}`)).body.status).toBe('success');
        // by branch name and on another commit
        expect(
          (
            await as(bob, t.http.post(`${P}/statuses/feature`))
              .send({ state: 'canceled' })
              .expect(201)
          ).body,
        ).toMatchObject({ sha: c5, ref: 'feature', status: 'canceled' });
      });

      it('errors: invalid or missing state 400, reporter 403, unknown commit 404', async () => {
        expect(
          (
            await as(bob, t.http.post(`${P}/statuses/${c3}`))
              .send({ state: 'bogus' })
              .expect(400)
          ).body,
        ).toEqual({ message: { status: ['is not included in the list'] } });
        expect(
          (
            await as(bob, t.http.post(`${P}/statuses/${c3}`))
              .send({})
              .expect(400)
          ).body,
        ).toEqual({ message: '400 (Bad request) "state" not given' });
        expect(
          (
            await as(carol, t.http.post(`${P}/statuses/${c3}`))
              .send({ state: 'success' })
              .expect(403)
          ).body,
        ).toEqual({ message: '403 Forbidden' });
        expect(
          (
            await as(bob, t.http.post(`${P}/statuses/${'e'.repeat(40)}`))
              .send({ state: 'success' })
              .expect(404)
          ).body,
        ).toEqual({ message: '404 Commit Not Found' });
        await as(bob, t.http.post(`${P}/statuses/${c3}`))
          .send({ state: 'success', target_url: 'javascript:alert(1)' })
          .expect(400);
      });

      it('GET lists the latest per name, all=true every one, and filters by name and ref', async () => {
        const res = await get(carol, `${R}/commits/${c3}/statuses`).expect(200);
        await expectSchema(res, 'CommitStatus[]');
        expect(res.body.map((s: Json) => [s.name, s.status]).sort()).toEqual([
          ['ci/build', 'success'],
          ['default', 'success'],
        ]);
        const all = await get(carol, `${R}/commits/${c3}/statuses`).query({ all: true }).expect(200);
        expect(all.body).toHaveLength(4); // default, ci/build (updated in place), failed, success
        expect(
          all.body
            .filter((s: Json) => s.name === 'ci/build')
            .map((s: Json) => s.status)
            .sort(),
        ).toEqual(['failed', 'success', 'success']);
        const named = await get(carol, `${R}/commits/${c3}/statuses`).query({ name: 'ci/build', all: 'true' }).expect(200);
        expect(named.body.every((s: Json) => s.name === 'ci/build')).toBe(true);
        expect(named.body).toHaveLength(3);
        expect((await get(carol, `${R}/commits/${c3}/statuses`).query({ ref_name: 'feature' }).expect(200)).body).toEqual([]);
        expect((await get(carol, `${R}/commits/${c3}/statuses`).query({ ref: 'master', name: 'default' }).expect(200)).body).toHaveLength(1);
        expect((await get(carol, `${R}/commits/${c3}/statuses`).query({ stage: 'external' }).expect(200)).body).toHaveLength(2);
        expect((await get(carol, `${R}/commits/${c3}/statuses`).query({ stage: 'test' }).expect(200)).body).toEqual([]);
        expect((await get(carol, `${R}/commits/master/statuses`).expect(200)).body).toHaveLength(2);
        expect((await get(carol, `${R}/commits/${c2}/statuses`).expect(200)).body).toEqual([]);
        expect((await get(carol, `${R}/commits/${'e'.repeat(40)}/statuses`).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
        expect((await get(gina, `${R}/commits/${c3}/statuses`).expect(403)).body).toEqual({ message: '403 Forbidden' });
      });
    });
  });

  // ------------------------------------------------------------------ contents

  describe('tree', () => {
    it('root of the default branch: trees first, then blobs, with 6-digit modes', async () => {
      const res = await get(carol, `${R}/tree`).expect(200);
      expect(res.body.map((e: Json) => [e.name, e.type, e.mode])).toEqual([
        ['bin', 'tree', '040000'],
        ['docs', 'tree', '040000'],
        ['src', 'tree', '040000'],
        ['README.md', 'blob', '100644'],
      ]);
      for (const e of res.body) expect(e.id).toMatch(SHA);
      await expectSchema(res, 'TreeEntry[]');
    });

    it('path and ref_name; unknown ref or path → 404 Tree Not Found', async () => {
      expect((await get(carol, `${R}/tree`).query({ path: 'docs' }).expect(200)).body).toEqual([
        { id: expect.stringMatching(SHA), name: 'guide.md', type: 'blob', mode: '100644' },
      ]);
      expect((await get(carol, `${R}/tree`).query({ path: 'docs/' }).expect(200)).body.map((e: Json) => e.name)).toEqual(['guide.md']);
      expect((await get(carol, `${R}/tree`).query({ ref_name: 'zeta' }).expect(200)).body.map((e: Json) => e.name)).toEqual(['README.md']);
      expect((await get(carol, `${R}/tree`).query({ ref_name: 'feature' }).expect(200)).body.map((e: Json) => e.name)).toEqual([
        'bin',
        'docs',
        'src',
        'README.md',
        'feature.txt',
      ]);
      expect((await get(carol, `${R}/tree`).query({ ref_name: c1 }).expect(200)).body.map((e: Json) => e.name)).toEqual(['README.md']);
      expect((await get(carol, `${R}/tree`).query({ ref_name: 'v2.0', path: 'src' }).expect(200)).body.map((e: Json) => e.name)).toEqual(['app.js']);
      for (const q of [{ ref_name: 'nope' }, { path: 'nope' }, { path: 'README.md' }, { ref_name: 'zeta', path: 'docs' }]) {
        const r = await get(carol, `${R}/tree`).query(q);
        expect([q, r.status, r.body]).toEqual([q, 404, { message: '404 Tree Not Found' }]);
      }
    });
  });

  describe('blobs and raw blobs', () => {
    it('blobs/:sha?filepath= returns the raw bytes as text/plain at a commit, branch or tag', async () => {
      let res = await bytes(get(carol, `${R}/blobs/master`).query({ filepath: 'README.md' })).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body.toString('utf8')).toBe(README_3);
      res = await bytes(get(carol, `${R}/blobs/${c1}`).query({ filepath: 'README.md' })).expect(200);
      expect(res.body.toString('utf8')).toBe(README_1);
      res = await bytes(get(carol, `${R}/blobs/v0.1`).query({ filepath: 'README.md' })).expect(200);
      expect(res.body.toString('utf8')).toBe(README_1);
      res = await bytes(get(carol, `${R}/blobs/master`).query({ filepath: 'bin/logo.bin' })).expect(200);
      expect(Buffer.compare(res.body, LOGO)).toBe(0);
      res = await bytes(get(carol, `${R}/commits/feature/blob`).query({ filepath: 'feature.txt' })).expect(200);
      expect(res.body.toString('utf8')).toBe('feature\nmore\n');
      res = await bytes(get(carol, `${R}/blobs/fix%2Fnested`).query({ filepath: 'src/app.js' })).expect(200);
      expect(res.body.toString('utf8')).toBe('console.log(1);\n');
    });

    it('errors: filepath missing 400, unknown file 404 File Not Found, unknown commit 404', async () => {
      expect((await get(carol, `${R}/blobs/master`).expect(400)).body).toEqual({ message: '400 (Bad request) "filepath" not given' });
      expect((await get(carol, `${R}/blobs/master`).query({ filepath: 'nope.txt' }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(carol, `${R}/blobs/master`).query({ filepath: 'docs' }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(carol, `${R}/blobs/zeta`).query({ filepath: 'src/app.js' }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(carol, `${R}/blobs/nope`).query({ filepath: 'README.md' }).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
    });

    it('raw_blobs/:sha by blob SHA; unknown or not a blob → 404 Blob Not Found', async () => {
      const tree = (await get(carol, `${R}/tree`)).body as Json[];
      const readme = tree.find((e) => e.name === 'README.md')!;
      let res = await bytes(get(carol, `${R}/raw_blobs/${readme.id}`)).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body.toString('utf8')).toBe(README_3);
      const bin = (await get(carol, `${R}/tree`).query({ path: 'bin' })).body[0];
      res = await bytes(get(carol, `${R}/raw_blobs/${bin.id}`)).expect(200);
      expect(Buffer.compare(res.body, LOGO)).toBe(0);
      for (const bad of ['0'.repeat(40), c3, tree[0].id, 'not-a-sha', 'master']) {
        const r = await get(carol, `${R}/raw_blobs/${bad}`);
        expect([bad, r.status, r.body]).toEqual([bad, 404, { message: '404 Blob Not Found' }]);
      }
    });
  });

  describe('archive', () => {
    const cacheDir = () => join(t.config.dataDir, 'archive-cache', String(project.id));

    it('tar.gz by default, of the default branch, with a proper name and top-level folder', async () => {
      const res = await bytes(get(carol, `${R}/archive`)).expect(200);
      const prefix = `repo-master-${c3}`;
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${prefix}.tar.gz"`);
      expect(res.headers['content-type']).toMatch(/gzip/);
      const body = res.body as Buffer;
      expect(body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      const tar = gunzipSync(body);
      expect(tar.subarray(257, 262).toString('latin1')).toBe('ustar');
      for (const f of ['README.md', 'docs/guide.md', 'src/app.js', 'bin/logo.bin']) expect(tar.includes(Buffer.from(`${prefix}/${f}`))).toBe(true);
      expect(tar.includes(Buffer.from(README_3))).toBe(true);
      expect(tar.includes(Buffer.from('feature.txt'))).toBe(false);
    });

    it('a second request is served from the cache with identical bytes', async () => {
      const first = await bytes(get(carol, `${R}/archive.tar.gz`).query({ sha: 'feature' })).expect(200);
      const cached = readdirSync(cacheDir()).filter((f) => f.startsWith(c5));
      expect(cached).toHaveLength(1);
      const second = await bytes(get(carol, `${R}/archive.tar.gz`).query({ sha: 'feature' })).expect(200);
      expect(Buffer.compare(first.body, second.body)).toBe(0);
      expect(Number(second.headers['content-length'])).toBe(second.body.length);
      expect(second.headers['content-disposition']).toBe(`attachment; filename="repo-feature-${c5}.tar.gz"`);
      expect(gunzipSync(second.body).includes(Buffer.from(`repo-feature-${c5}/feature.txt`))).toBe(true);
    });

    it('archive.zip lists the files under the prefix', async () => {
      const res = await bytes(get(carol, `${R}/archive.zip`)).expect(200);
      const prefix = `repo-master-${c3}`;
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${prefix}.zip"`);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.body.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
      const file = join(tmp, 'archive.zip');
      writeFileSync(file, res.body);
      const listing = execFileSync('unzip', ['-l', file]).toString();
      for (const f of ['README.md', 'docs/guide.md', 'src/app.js', 'bin/logo.bin']) expect(listing).toContain(`${prefix}/${f}`);
      expect(execFileSync('unzip', ['-p', file, `${prefix}/README.md`]).toString()).toBe(README_3);
    });

    it('archive.tar and archive.tar.bz2 (and the tgz/tbz2 aliases), of a tag or a SHA', async () => {
      let res = await bytes(get(carol, `${R}/archive.tar`).query({ sha: 'v0.1' })).expect(200);
      expect(res.headers['content-disposition']).toBe(`attachment; filename="repo-v0.1-${c1}.tar"`);
      expect(res.body.subarray(257, 262).toString('latin1')).toBe('ustar');
      expect(res.body.includes(Buffer.from(`repo-v0.1-${c1}/README.md`))).toBe(true);
      expect(res.body.includes(Buffer.from('docs/guide.md'))).toBe(false);

      res = await bytes(get(carol, `${R}/archive.tar.bz2`).query({ sha: c2 })).expect(200);
      expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="repo-[0-9a-f]{8,40}-${c2}\\.tar\\.bz2"$`));
      expect(res.body.subarray(0, 3).toString('latin1')).toBe('BZh');
      const tar = execFileSync('bzip2', ['-dc'], { input: res.body });
      expect(tar.includes(Buffer.from('/docs/guide.md'))).toBe(true);

      res = await bytes(get(carol, `${R}/archive.tbz2`).query({ sha: 'zeta' })).expect(200);
      expect(res.headers['content-disposition']).toBe(`attachment; filename="repo-zeta-${c1}.tar.bz2"`);
      res = await bytes(get(carol, `${R}/archive.tgz`).query({ sha: 'fix/nested' })).expect(200);
      expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="repo-fix-nested-${c2}\\.tar\\.gz"$`));
      expect(gunzipSync(res.body).includes(Buffer.from('/src/app.js'))).toBe(true);
    });

    it('unknown sha → 404 File Not Found', async () => {
      for (const sha of ['nope', 'f'.repeat(40)]) {
        expect((await get(carol, `${R}/archive`).query({ sha }).expect(404)).body).toEqual({ message: '404 File Not Found' });
        expect((await get(carol, `${R}/archive.zip`).query({ sha }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      }
    });
  });

  describe('compare and contributors', () => {
    it('compare: commits oldest first, the newest as `commit`, diffs from the merge base', async () => {
      const res = await get(carol, `${R}/compare`).query({ from: 'master', to: 'feature' }).expect(200);
      await expectSchema(res, 'CompareResult');
      expect(res.body.commits.map((c: Json) => c.id)).toEqual([c4, c5]);
      expect(res.body.commits.map((c: Json) => c.allow_failure)).toEqual([false, false]); // a list of commits (spec)
      expect(res.body.commit).toMatchObject({ id: c5, short_id: c5.slice(0, 8), title: 'Extend feature' });
      expect(res.body.diffs).toEqual([
        expect.objectContaining({ old_path: 'feature.txt', new_path: 'feature.txt', new_file: true, diff: expect.stringContaining('+feature\n+more') }),
      ]);
      expect(res.body).toMatchObject({ compare_timeout: false, compare_same_ref: false });

      const shas = await get(carol, `${R}/compare`).query({ from: c1, to: c3 }).expect(200);
      expect(shas.body.commits.map((c: Json) => c.id)).toEqual([c2, c3]);
      expect(shas.body.diffs.map((d: Json) => d.new_path).sort()).toEqual(['README.md', 'bin/logo.bin', 'docs/guide.md', 'src/app.js']);

      // diverged: only what `to` adds since the merge base
      const diverged = await get(carol, `${R}/compare`).query({ from: 'fix/nested', to: 'zeta' }).expect(200);
      expect(diverged.body).toMatchObject({ commits: [], diffs: [], commit: null, compare_same_ref: false });
    });

    it('same ref → compare_same_ref with empty lists; child → parent is empty but not "same"', async () => {
      for (const [from, to] of [
        ['master', 'master'],
        [c3, 'master'],
      ]) {
        const res = await get(carol, `${R}/compare`).query({ from, to }).expect(200);
        expect(res.body).toEqual({ commit: null, commits: [], diffs: [], compare_timeout: false, compare_same_ref: true });
      }
      const back = await get(carol, `${R}/compare`).query({ from: 'feature', to: 'master' }).expect(200);
      expect(back.body).toMatchObject({ commits: [], diffs: [], compare_same_ref: false });
    });

    it('compare errors: missing from/to 400, unknown ref 404', async () => {
      expect((await get(carol, `${R}/compare`).query({ to: 'master' }).expect(400)).body).toEqual({ message: '400 (Bad request) "from" not given' });
      expect((await get(carol, `${R}/compare`).query({ from: 'master' }).expect(400)).body).toEqual({ message: '400 (Bad request) "to" not given' });
      expect((await get(carol, `${R}/compare`).query({ from: 'master', to: 'nope' }).expect(404)).body.message).toMatch(/^404/);
    });

    it('contributors of the default branch, grouped by email, newest author first, additions/deletions 0', async () => {
      const res = await get(carol, `${R}/contributors`).expect(200);
      await expectSchema(res, 'Contributor[]');
      expect(res.body).toEqual([
        { name: 'Ann Author', email: 'ann@example.com', commits: 2, additions: 0, deletions: 0 },
        { name: 'Ben Builder', email: 'ben@example.com', commits: 1, additions: 0, deletions: 0 },
      ]);
    });
  });

  // ------------------------------------------------------------------ files API

  describe('files API', () => {
    const F = () => `${R}/files`;

    beforeAll(async () => {
      await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'work', ref: 'master' })
        .expect(201);
    });

    it('GET: base64 content, blob_id, commit_id and last_commit_id', async () => {
      const tree = (await get(carol, `${R}/tree`).query({ path: 'docs' })).body as Json[];
      const res = await get(carol, F()).query({ file_path: 'docs/guide.md', ref: 'master' }).expect(200);
      await expectSchema(res, 'RepositoryFile');
      expect(res.body).toEqual({
        file_name: 'guide.md',
        file_path: 'docs/guide.md',
        size: 6,
        encoding: 'base64',
        content: Buffer.from('guide\n').toString('base64'),
        ref: 'master',
        blob_id: tree[0].id,
        commit_id: c3,
        last_commit_id: c2,
      });
      const readme = await get(carol, F()).query({ file_path: 'README.md', ref: 'v0.1' }).expect(200);
      expect(Buffer.from(readme.body.content, 'base64').toString()).toBe(README_1);
      expect(readme.body).toMatchObject({ commit_id: c1, last_commit_id: c1, ref: 'v0.1' });
      const logo = await get(carol, F()).query({ file_path: 'bin/logo.bin', ref: c2 }).expect(200);
      expect(Buffer.compare(Buffer.from(logo.body.content, 'base64'), LOGO)).toBe(0);
      expect(logo.body.size).toBe(LOGO.length);
    });

    it('GET errors: missing params 400, unknown file or ref 404', async () => {
      expect((await get(carol, F()).query({ ref: 'master' }).expect(400)).body).toEqual({ message: '400 (Bad request) "file_path" not given' });
      expect((await get(carol, F()).query({ file_path: 'README.md' }).expect(400)).body).toEqual({ message: '400 (Bad request) "ref" not given' });
      expect((await get(carol, F()).query({ file_path: 'nope.md', ref: 'master' }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(carol, F()).query({ file_path: 'docs', ref: 'master' }).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(carol, F()).query({ file_path: 'README.md', ref: 'nope' }).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
    });

    it('POST creates (201), PUT updates (200), DELETE removes (200), each a commit by the API user', async () => {
      const created = await as(bob, t.http.post(F()))
        .send({ file_path: 'notes/todo.txt', branch_name: 'work', content: 'buy milk\n', commit_message: 'Add todo' })
        .expect(201);
      expect(created.body).toEqual({ file_name: 'notes/todo.txt', file_path: 'notes/todo.txt', branch_name: 'work' });
      let head = (await get(bob, `${R}/commits/work`).expect(200)).body;
      expect(head).toMatchObject({ message: 'Add todo', author_name: 'Bob Developer', author_email: 'bob@example.com', parent_ids: [c3] });
      const branch = (await get(bob, `${R}/branches/work`)).body;
      expect(branch.commit).toMatchObject({ id: head.id, committer_name: 'Bob Developer', committer_email: 'bob@example.com' });
      let file = await get(bob, F()).query({ file_path: 'notes/todo.txt', ref: 'work' }).expect(200);
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('buy milk\n');
      expect(file.body.last_commit_id).toBe(head.id);

      const updated = await as(bob, t.http.put(F()))
        .send({ file_path: 'notes/todo.txt', branch_name: 'work', content: 'buy milk\nbuy bread\n', commit_message: 'Update todo' })
        .expect(200);
      expect(updated.body).toEqual({ file_name: 'notes/todo.txt', file_path: 'notes/todo.txt', branch_name: 'work' });
      const afterUpdate = (await get(bob, `${R}/commits/work`)).body;
      expect(afterUpdate).toMatchObject({ message: 'Update todo', parent_ids: [head.id], author_email: 'bob@example.com' });
      file = await get(bob, F()).query({ file_path: 'notes/todo.txt', ref: 'work' }).expect(200);
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('buy milk\nbuy bread\n');
      expect(file.body.last_commit_id).toBe(afterUpdate.id); // the branch moved: not the remembered answer for the old tip
      const diff = (await get(bob, `${R}/commits/work/diff`)).body;
      expect(diff).toEqual([expect.objectContaining({ new_path: 'notes/todo.txt', new_file: false, diff: expect.stringContaining('+buy bread') })]);

      const removed = await as(bob, t.http.delete(F())).send({ file_path: 'notes/todo.txt', branch_name: 'work', commit_message: 'Remove todo' }).expect(200);
      await expectSchema(removed, 'FileCommit');
      expect(removed.body).toEqual({ file_name: 'notes/todo.txt', file_path: 'notes/todo.txt', branch_name: 'work' });
      await get(bob, F()).query({ file_path: 'notes/todo.txt', ref: 'work' }).expect(404);
      head = (await get(bob, `${R}/commits/work`)).body;
      expect(head).toMatchObject({ message: 'Remove todo', parent_ids: [afterUpdate.id] });
      expect((await get(bob, `${R}/commits/work/diff`)).body).toEqual([expect.objectContaining({ old_path: 'notes/todo.txt', deleted_file: true })]);
      // master did not move
      expect(await branchTip('master')).toBe(c3);
      // the writes were recorded as pushes
      const events = (await get(alice, `${P}/events`)).body as Json[];
      expect(events[0]).toMatchObject({ action_name: 'pushed to', author_id: bob.id });
      expect(events[0].data).toMatchObject({ ref: 'refs/heads/work', after: head.id, total_commits_count: 1 });
    });

    it('a leading slash is stripped; query-string parameters work too', async () => {
      const res = await as(bob, t.http.post(F())).query({ file_path: '/top.txt', branch_name: 'work', content: 'top', commit_message: 'top' }).expect(201);
      expect(res.body.file_path).toBe('top.txt');
      expect((await get(bob, F()).query({ file_path: 'top.txt', ref: 'work' }).expect(200)).body.content).toBe(Buffer.from('top').toString('base64'));
    });

    it('base64 content round-trips binary bytes exactly', async () => {
      const data = Buffer.concat([Buffer.from([...Array(256).keys()]), Buffer.from('\r\n\0tail\xff', 'latin1')]);
      await as(bob, t.http.post(F()))
        .send({ file_path: 'bin/data.bin', branch_name: 'work', encoding: 'base64', content: data.toString('base64'), commit_message: 'binary' })
        .expect(201);
      const file = await get(bob, F()).query({ file_path: 'bin/data.bin', ref: 'work' }).expect(200);
      expect(file.body.size).toBe(data.length);
      expect(Buffer.compare(Buffer.from(file.body.content, 'base64'), data)).toBe(0);
      const raw = await bytes(get(bob, `${R}/blobs/work`).query({ filepath: 'bin/data.bin' })).expect(200);
      expect(Buffer.compare(raw.body, data)).toBe(0);
      const rawBlob = await bytes(get(bob, `${R}/raw_blobs/${file.body.blob_id}`)).expect(200);
      expect(Buffer.compare(rawBlob.body, data)).toBe(0);
      // and text content is stored as UTF-8
      await as(bob, t.http.put(F()))
        .send({ file_path: 'bin/data.bin', branch_name: 'work', encoding: 'text', content: 'żółw 🐢', commit_message: 'text' })
        .expect(200);
      const text = await bytes(get(bob, `${R}/blobs/work`).query({ filepath: 'bin/data.bin' })).expect(200);
      expect(text.body.toString('utf8')).toBe('żółw 🐢');
    });

    it('failures are 400: traversal, bad names, existing file, identical content, missing file or branch, missing params', async () => {
      const send = (method: 'post' | 'put' | 'delete', body: Json) => as(bob, t.http[method](F())).send({ branch_name: 'work', commit_message: 'm', ...body });
      const before = await branchTip('work');
      for (const path of ['a/../../etc/passwd', '../etc/passwd', 'docs/../README.md', '..']) {
        const res = await send('post', { file_path: path, content: 'x' });
        expect([path, res.status]).toEqual([path, 400]);
        expect(res.body.message).toMatch(/directory traversal/);
      }
      for (const path of ['bad name.txt', 'semi;colon', 'a\0b', 'dir/', 'a//b', '', 'new\nline']) {
        const res = await send('post', { file_path: path, content: 'x' });
        expect([path, res.status]).toEqual([path, 400]);
      }
      expect((await send('post', { file_path: 'README.md', content: 'x' }).expect(400)).body).toEqual({
        message: '400 Your changes could not be committed because a file with the same name already exists',
      });
      const same = await send('put', { file_path: 'README.md', content: README_3 }).expect(400);
      expect(typeof same.body.message).toBe('string');
      await send('put', { file_path: 'missing.txt', content: 'x' }).expect(400);
      await send('delete', { file_path: 'missing.txt' }).expect(400);
      expect((await send('post', { file_path: 'x.txt', content: 'x', branch_name: 'no-such-branch' }).expect(400)).body).toEqual({
        message: '400 You can only create or edit files when you are on a branch',
      });
      expect((await send('post', { file_path: 'x.txt' }).expect(400)).body).toEqual({ message: '400 (Bad request) "content" not given' });
      expect((await send('post', { content: 'x' }).expect(400)).body).toEqual({ message: '400 (Bad request) "file_path" not given' });
      expect((await send('post', { file_path: 'x.txt', content: 'x', commit_message: undefined }).expect(400)).body).toEqual({
        message: '400 (Bad request) "commit_message" not given',
      });
      expect((await as(bob, t.http.post(F())).send({ file_path: 'x.txt', content: 'x', commit_message: 'm' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "branch_name" not given',
      });
      await send('post', { file_path: 'x.txt', content: '!!!not base64!!!', encoding: 'base64' }).expect(400);
      await send('post', { file_path: 'x.txt', content: 'x', encoding: 'rot13' }).expect(400);
      expect(await branchTip('work')).toBe(before);
    });

    it('permissions: reporter and guest 403, non-member 404; a protected branch refuses developers (400)', async () => {
      const body = { file_path: 'perm.txt', branch_name: 'work', content: 'x', commit_message: 'm' };
      expect((await as(carol, t.http.post(F())).send(body).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await as(carol, t.http.put(F()))
        .send({ ...body, file_path: 'README.md' })
        .expect(403);
      await as(carol, t.http.delete(F()))
        .send({ ...body, file_path: 'README.md' })
        .expect(403);
      await as(gina, t.http.post(F())).send(body).expect(403);
      expect((await as(ollie, t.http.post(F())).send(body).expect(404)).body).toEqual({ message: '404 Project Not Found' });

      await as(alice, t.http.put(`${R}/branches/zeta/protect`)).expect(200);
      try {
        const res = await as(bob, t.http.post(F()))
          .send({ ...body, branch_name: 'zeta' })
          .expect(400);
        expect(res.body).toEqual({ message: '400 You are not allowed to push into this branch' });
        expect(await branchTip('zeta')).toBe(c1);
        // a master may write to it
        await as(alice, t.http.post(F()))
          .send({ ...body, branch_name: 'zeta' })
          .expect(201);
        expect(await branchTip('zeta')).not.toBe(c1);
      } finally {
        await as(alice, t.http.put(`${R}/branches/zeta/unprotect`)).expect(200);
      }
      // a branch protected with developers_can_push (as master is, at default_branch_protection 1): developers may write
      await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'devpush', ref: 'master' })
        .expect(201);
      await as(alice, t.http.put(`${R}/branches/devpush/protect`))
        .send({ developers_can_push: true })
        .expect(200);
      await as(bob, t.http.post(F()))
        .send({ ...body, branch_name: 'devpush' })
        .expect(201);
      expect((await get(bob, `${R}/commits/devpush`)).body).toMatchObject({ parent_ids: [c3], author_email: 'bob@example.com' });
    });

    it('compare-and-swap: two concurrent PUTs of one file give exactly one 200 and one 400', async () => {
      await as(bob, t.http.post(F())).send({ file_path: 'race.txt', branch_name: 'work', content: 'start\n', commit_message: 'race start' }).expect(201);
      const base = (await branchTip('work'))!;
      const put = (content: string) =>
        as(bob, t.http.put(F())).send({ file_path: 'race.txt', branch_name: 'work', content, commit_message: `race ${content}` });
      const [a, b] = await Promise.all([put('from A\n'), put('from B\n')]);
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const winner = a.status === 200 ? 'from A\n' : 'from B\n';
      const loser = a.status === 200 ? b : a;
      expect(loser.body).toEqual({ message: expect.stringMatching(/^400 Your changes could not be committed/) });
      const file = await get(bob, F()).query({ file_path: 'race.txt', ref: 'work' }).expect(200);
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe(winner);
      // exactly one commit landed on top of the base
      const log = (await get(bob, `${R}/commits`).query({ ref_name: 'work', per_page: 2 })).body;
      expect(log[1].id).toBe(base);
      expect(log[0].message).toBe(`race ${winner}`);
    });

    it('a diff entry over the per-file limit is marked too_large with its text left out', async () => {
      const big = Array.from({ length: 30_000 }, (_, i) => `line ${i} ${'x'.repeat(10)}`).join('\n') + '\n';
      await as(bob, t.http.post(F())).send({ file_path: 'big.txt', branch_name: 'work', content: big, commit_message: 'big file' }).expect(201);
      const diff = (await get(bob, `${R}/commits/work/diff`).expect(200)).body as Json[];
      expect(diff).toHaveLength(1);
      expect(diff[0]).toMatchObject({ new_path: 'big.txt', new_file: true, too_large: true, diff: '' });
      const file = await get(bob, F()).query({ file_path: 'big.txt', ref: 'work' }).expect(200);
      expect(file.body.size).toBe(Buffer.byteLength(big));
    });

    // Pushes through the server wait for the repository lock a files-API write holds; these pushes go
    // straight into the bare repository (a write that did not take the lock, as when the lock's
    // connection was lost): the compare-and-swap of the ref update is what must still protect them.
    const pushAroundTheLock = (dir: string) => cli.ok(['push', '-q', t.app.app.get(GitService).repositoryPath(project.id), 'work'], dir);

    it('a push between reading and writing the branch that touches the same file fails the write with 400 and keeps the push', async () => {
      // a clone with a commit on top of `work`, pushed at the moment the API is about to commit
      const dir = join(tmp, 'cas-clone');
      await cli.ok(['clone', '-q', '--branch', 'work', cli.url('alice/repo', 'bob', bob.token), dir]);
      const pushed = await cli.commit(dir, { 'race-same.txt': 'pushed\n' }, 'pushed meanwhile');
      const original = Repository.prototype.commitFiles;
      const spy = jest.spyOn(Repository.prototype, 'commitFiles').mockImplementationOnce(async function (this: Repository, o) {
        await pushAroundTheLock(dir);
        return original.call(this, o);
      });
      try {
        const res = await as(bob, t.http.post(F()))
          .send({ file_path: 'race-same.txt', branch_name: 'work', content: 'api\n', commit_message: 'api write' })
          .expect(400);
        expect(res.body.message).toBe('400 Your changes could not be committed because the branch was updated in the meantime');
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
      expect(await branchTip('work')).toBe(pushed);
      const file = await get(bob, F()).query({ file_path: 'race-same.txt', ref: 'work' }).expect(200);
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('pushed\n');
    });

    it('a push in between that does not touch the file: the write is applied on the new tip, the push kept', async () => {
      const dir = join(tmp, 'cas-clone-2');
      await cli.ok(['clone', '-q', '--branch', 'work', cli.url('alice/repo', 'bob', bob.token), dir]);
      const pushed = await cli.commit(dir, { 'elsewhere.txt': 'pushed\n' }, 'pushed meanwhile, another file');
      const original = Repository.prototype.commitFiles;
      const spy = jest.spyOn(Repository.prototype, 'commitFiles').mockImplementationOnce(async function (this: Repository, o) {
        await pushAroundTheLock(dir);
        return original.call(this, o);
      });
      try {
        await as(bob, t.http.put(F())).send({ file_path: 'race.txt', branch_name: 'work', content: 'api\n', commit_message: 'api write' }).expect(200);
        expect(spy).toHaveBeenCalledTimes(2);
      } finally {
        spy.mockRestore();
      }
      const tip = (await get(bob, `${R}/commits/work`).expect(200)).body;
      expect(tip.title).toBe('api write');
      expect(tip.parent_ids).toEqual([pushed]);
      const file = await get(bob, F()).query({ file_path: 'race.txt', ref: 'work' }).expect(200);
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('api\n');
      await get(bob, F()).query({ file_path: 'elsewhere.txt', ref: 'work' }).expect(200);
    });
  });

  describe('an empty repository', () => {
    let E: string;
    let empty: Json;
    beforeAll(async () => {
      empty = (
        await as(alice, t.http.post(`${API}/projects`))
          .send({ name: 'blank', visibility_level: 0 })
          .expect(201)
      ).body;
      E = `${API}/projects/${empty.id}/repository`;
    });

    it('reads answer empty lists or 404s, never 500', async () => {
      expect((await get(alice, `${E}/branches`).expect(200)).body).toEqual([]);
      expect((await get(alice, `${E}/tags`).expect(200)).body).toEqual([]);
      expect((await get(alice, `${E}/commits`).expect(200)).body).toEqual([]);
      expect((await get(alice, `${E}/contributors`).expect(200)).body).toEqual([]);
      expect((await get(alice, `${E}/tree`).expect(404)).body).toEqual({ message: '404 Tree Not Found' });
      expect((await get(alice, `${E}/branches/master`).expect(404)).body).toEqual({ message: '404 Branch Not Found' });
      expect((await get(alice, `${E}/commits/master`).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
      expect((await get(alice, `${E}/archive`).expect(404)).body).toEqual({ message: '404 File Not Found' });
      expect((await get(alice, `${E}/files`).query({ file_path: 'README.md', ref: 'master' }).expect(404)).body).toEqual({ message: '404 Commit Not Found' });
      expect(
        (
          await as(alice, t.http.post(`${E}/branches`))
            .send({ branch_name: 'x', ref: 'master' })
            .expect(400)
        ).body,
      ).toEqual({ message: '400 Invalid reference name' });
    });

    it('the files API makes the first commit, which sets and protects the default branch', async () => {
      await as(alice, t.http.post(`${E}/files`))
        .send({ file_path: 'README.md', branch_name: 'master', content: '# blank\n', commit_message: 'first' })
        .expect(201);
      const commits = (await get(alice, `${E}/commits`).expect(200)).body;
      expect(commits).toHaveLength(1);
      expect(commits[0]).toMatchObject({ message: 'first', author_email: 'alice@example.com', parent_ids: [] });
      expect((await get(alice, `${API}/projects/${empty.id}`).expect(200)).body.default_branch).toBe('master');
      expect((await get(alice, `${E}/branches/master`).expect(200)).body).toMatchObject({ protected: true, developers_can_push: true });
      expect((await get(alice, `${E}/tree`).expect(200)).body.map((e: Json) => e.name)).toEqual(['README.md']);
      // another branch cannot be started from nothing once the repository has commits
      expect(
        (
          await as(alice, t.http.post(`${E}/files`))
            .send({ file_path: 'x.txt', branch_name: 'other', content: 'x', commit_message: 'x' })
            .expect(400)
        ).body,
      ).toEqual({
        message: '400 You can only create or edit files when you are on a branch',
      });
    });
  });

  // ------------------------------------------------------------------ hostile inputs

  describe('hostile inputs', () => {
    const evil = () => `--upload-pack=touch ${pwned}`;
    const safe = (status: number) => status === 400 || status === 404;

    it('option-like refs are refused (400/404, never 500) and run nothing', async () => {
      const e = evil();
      const enc = encodeURIComponent(e);
      const reqs: [string, Test][] = [
        ['commits ref_name', get(bob, `${R}/commits`).query({ ref_name: e })],
        ['commits ref_name -all', get(bob, `${R}/commits`).query({ ref_name: '--all' })],
        ['commit sha', get(bob, `${R}/commits/${enc}`)],
        ['commit diff', get(bob, `${R}/commits/${enc}/diff`)],
        ['commit comments', get(bob, `${R}/commits/${enc}/comments`)],
        ['commit statuses', get(bob, `${R}/commits/${enc}/statuses`)],
        ['post status', as(bob, t.http.post(`${P}/statuses/${enc}`)).send({ state: 'success' })],
        ['tree ref_name', get(bob, `${R}/tree`).query({ ref_name: e })],
        ['tree ref_name -h', get(bob, `${R}/tree`).query({ ref_name: '-h' })],
        ['blob sha', get(bob, `${R}/blobs/${enc}`).query({ filepath: 'README.md' })],
        ['blob filepath', get(bob, `${R}/blobs/master`).query({ filepath: e })],
        ['raw blob', get(bob, `${R}/raw_blobs/${enc}`)],
        ['archive', get(bob, `${R}/archive`).query({ sha: e })],
        ['archive --output', get(bob, `${R}/archive.zip`).query({ sha: `--output=${pwned}` })],
        ['compare from', get(bob, `${R}/compare`).query({ from: e, to: 'master' })],
        ['compare to', get(bob, `${R}/compare`).query({ from: 'master', to: e })],
        ['branch get', get(bob, `${R}/branches/${enc}`)],
        ['branch create name', as(bob, t.http.post(`${R}/branches`)).send({ branch_name: e, ref: 'master' })],
        ['branch create ref', as(bob, t.http.post(`${R}/branches`)).send({ branch_name: 'evil-ref', ref: e })],
        ['branch delete', as(bob, t.http.delete(`${R}/branches/${enc}`))],
        ['branch protect', as(alice, t.http.put(`${R}/branches/${enc}/protect`))],
        ['tag get', get(bob, `${R}/tags/${enc}`)],
        ['tag delete', as(bob, t.http.delete(`${R}/tags/${enc}`))],
        ['file get ref', get(bob, `${R}/files`).query({ file_path: 'README.md', ref: e })],
        ['file get path', get(bob, `${R}/files`).query({ file_path: e, ref: 'master' })],
        ['file post branch', as(bob, t.http.post(`${R}/files`)).send({ file_path: 'e.txt', branch_name: e, content: 'x', commit_message: 'm' })],
        ['file post path', as(bob, t.http.post(`${R}/files`)).send({ file_path: e, branch_name: 'work', content: 'x', commit_message: 'm' })],
      ];
      for (const [name, req] of reqs) {
        const res = await req;
        expect([name, res.status, safe(res.status)]).toEqual([name, res.status, true]);
      }
      // tags refuse with 405 (the spec's status for a failed tag creation)
      for (const body of [
        { tag_name: e, ref: 'master' },
        { tag_name: 'evil', ref: e },
      ]) {
        const res = await as(bob, t.http.post(`${R}/tags`)).send(body);
        expect(res.status).toBe(405);
      }
      expect(existsSync(pwned)).toBe(false);
      expect((await get(bob, `${R}/branches`)).body.map((b: Json) => b.name)).not.toContain('evil-ref');
    });

    it('path traversal is refused (400/404) and reads nothing outside the repository', async () => {
      const paths = ['../../etc/passwd', '../../../../../../etc/passwd', 'docs/../../etc/passwd', './README.md', 'docs/./guide.md'];
      for (const p of paths) {
        const reqs: [string, Test][] = [
          ['blob', get(bob, `${R}/blobs/master`).query({ filepath: p })],
          ['file', get(bob, `${R}/files`).query({ file_path: p, ref: 'master' })],
          ['tree', get(bob, `${R}/tree`).query({ path: p })],
          ['write', as(bob, t.http.post(`${R}/files`)).send({ file_path: p, branch_name: 'work', content: 'x', commit_message: 'm' })],
        ];
        for (const [name, req] of reqs) {
          const res = await req;
          expect([p, name, safe(res.status)]).toEqual([p, name, true]);
          expect(JSON.stringify(res.body)).not.toContain('root:');
        }
      }
      // an absolute path reads nothing, and a write lands inside the repository (leading `/` stripped)
      expect((await get(bob, `${R}/blobs/master`).query({ filepath: '/etc/passwd' })).status).toBe(404);
      expect((await get(bob, `${R}/files`).query({ file_path: '/etc/passwd', ref: 'master' })).status).toBe(404);
      expect((await get(bob, `${R}/tree`).query({ path: '/etc' })).status).toBe(404);
      const abs = await as(bob, t.http.post(`${R}/files`))
        .send({ file_path: '/etc/passwd', branch_name: 'work', content: 'in repo', commit_message: 'm' })
        .expect(201);
      expect(abs.body.file_path).toBe('etc/passwd');
      const inRepo = await bytes(get(bob, `${R}/blobs/work`).query({ filepath: 'etc/passwd' })).expect(200);
      expect(inRepo.body.toString()).toBe('in repo');
      for (const path of ['..%2F..%2Fetc%2Fpasswd', '..%2F..%2F..%2Fetc']) {
        const res = await get(bob, `${R}/raw_blobs/${path}`);
        expect(safe(res.status)).toBe(true);
      }
      expect((await get(bob, `${R}/tree`).query({ path: '../..' }).expect(400)).body.message).toBeDefined();
    });

    it('NUL bytes in refs and paths are refused (400/404)', async () => {
      const reqs: [string, Test][] = [
        ['commit', get(bob, `${R}/commits/master%00`)],
        ['commit2', get(bob, `${R}/commits/master%00--all`)],
        ['commits ref_name', get(bob, `${R}/commits?ref_name=master%00--all`)],
        ['tree ref', get(bob, `${R}/tree?ref_name=master%00`)],
        ['tree path', get(bob, `${R}/tree?path=docs%00`)],
        ['blob sha', get(bob, `${R}/blobs/master%00?filepath=README.md`)],
        ['blob path', get(bob, `${R}/blobs/master?filepath=README.md%00`)],
        ['raw blob', get(bob, `${R}/raw_blobs/${c3.slice(0, 10)}%00`)],
        ['branch get', get(bob, `${R}/branches/master%00`)],
        ['tag get', get(bob, `${R}/tags/v0.1%00`)],
        ['archive', get(bob, `${R}/archive?sha=master%00`)],
        ['compare', get(bob, `${R}/compare?from=master%00&to=feature`)],
        ['file get', get(bob, `${R}/files?file_path=README.md%00&ref=master`)],
        ['file ref', get(bob, `${R}/files?file_path=README.md&ref=master%00`)],
        ['branch create', as(bob, t.http.post(`${R}/branches`)).send({ branch_name: 'nul\0name', ref: 'master' })],
        ['branch create ref', as(bob, t.http.post(`${R}/branches`)).send({ branch_name: 'nul-ref', ref: 'master\0' })],
        ['file write', as(bob, t.http.post(`${R}/files`)).send({ file_path: 'nul\0.txt', branch_name: 'work', content: 'x', commit_message: 'm' })],
        ['file write branch', as(bob, t.http.post(`${R}/files`)).send({ file_path: 'nul.txt', branch_name: 'work\0', content: 'x', commit_message: 'm' })],
      ];
      for (const [name, req] of reqs) {
        const res = await req;
        expect([name, res.status, safe(res.status)]).toEqual([name, res.status, true]);
      }
      expect((await get(bob, `${R}/branches`)).body.map((b: Json) => b.name)).not.toContain('nul-ref');
    });
  });

  // ------------------------------------------------------------------ defects fixed by the house refactor (issue 10)

  describe('dates beyond 2099 and .git paths', () => {
    it('since/until are exact instants for any year up to 9999 (git log ignores its own dates from 2100)', async () => {
      const list = (q: Json) =>
        get(carol, `${R}/commits`)
          .query({ ref_name: 'feature', ...q })
          .expect(200);
      const ids = async (q: Json) => (await list(q)).body.map((c: Json) => c.id);
      const all = [c5, c4, c3, c2, c1];
      const future = await list({ since: '2100-01-01T00:00:00Z' });
      expect(future.body).toEqual([]);
      expect(future.headers['x-total']).toBe('0');
      expect(await ids({ since: '9999-12-31T23:59:59Z' })).toEqual([]);
      expect(await ids({ since: '2099-12-31T23:59:59Z' })).toEqual([]);
      expect(await ids({ until: '2100-01-01T00:00:00Z' })).toEqual(all);
      expect(await ids({ until: '9999-12-31T23:59:59Z' })).toEqual(all);
      expect(await ids({ since: '0001-01-01T00:00:00Z' })).toEqual(all);
      expect(await ids({ since: '0001-01-01T00:00:00Z', until: '1969-12-31T23:59:59Z' })).toEqual([]);
      // an offset names the same instant: c5 was committed at 2020-04-02T10:00:00Z
      expect(await ids({ since: '2020-04-02T12:00:00+02:00' })).toEqual([c5]);
      expect(await ids({ since: '2020-04-02T10:00:00.001Z' })).toEqual([]);
      expect(await ids({ until: '2020-04-02T09:59:59.999Z', since: '2020-04-01T10:00:00Z' })).toEqual([c4]);
      for (const bad of ['10000-01-01T00:00:00Z', '2100-02-30T00:00:00Z', '2100-01-01T24:00:00Z']) {
        const res = await get(carol, `${R}/commits`).query({ since: bad }).expect(400);
        expect([bad, res.body]).toEqual([bad, { message: '400 "since" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ' }]);
      }
    });

    it('a path with a .git component (any case, anywhere) is 400 "<field>" is invalid on every route that takes a path, and commits nothing', async () => {
      await as(bob, t.http.post(`${R}/branches`))
        .send({ branch_name: 'dotgit', ref: 'master' })
        .expect(201);
      const before = await branchTip('dotgit');
      const body = (file_path: string) => ({ file_path, branch_name: 'dotgit', content: 'x', commit_message: 'm' });
      for (const p of ['.git', '.git/config', '.GIT/config', 'a/.git/config', 'sub/.git/hooks/x', '/.git/HEAD', '.Git/']) {
        const reqs: [string, Test, string][] = [
          ['file create', as(bob, t.http.post(`${R}/files`)).send(body(p)), 'file_path'],
          ['file update', as(bob, t.http.put(`${R}/files`)).send(body(p)), 'file_path'],
          ['file delete', as(bob, t.http.delete(`${R}/files`)).send({ file_path: p, branch_name: 'dotgit', commit_message: 'm' }), 'file_path'],
          ['file get', get(bob, `${R}/files`).query({ file_path: p, ref: 'master' }), 'file_path'],
          ['tree', get(bob, `${R}/tree`).query({ path: p }), 'path'],
          ['blob', get(bob, `${R}/blobs/master`).query({ filepath: p }), 'filepath'],
          ['commit blob', get(bob, `${R}/commits/master/blob`).query({ filepath: p }), 'filepath'],
        ];
        for (const [name, req, field] of reqs) {
          const res = await req;
          expect([p, name, res.status, res.body]).toEqual([p, name, 400, { message: `400 (Bad request) "${field}" is invalid` }]);
        }
      }
      expect(await branchTip('dotgit')).toBe(before);
      // names that only look alike stay ordinary files
      for (const ok of ['.gitignore', 'x.git/y', '.github/ci.yml']) {
        const res = await as(bob, t.http.post(`${R}/files`))
          .send(body(ok))
          .expect(201);
        expect(res.body.file_path).toBe(ok);
      }
    });
  });

  // ------------------------------------------------------------------ authentication and visibility

  describe('access', () => {
    const routes = () => [
      `${R}/branches`,
      `${R}/branches/master`,
      `${R}/tags`,
      `${R}/tags/v0.1`,
      `${R}/commits`,
      `${R}/commits/master`,
      `${R}/commits/master/diff`,
      `${R}/commits/master/comments`,
      `${R}/tree`,
      `${R}/blobs/master?filepath=README.md`,
      `${R}/raw_blobs/${'a'.repeat(40)}`,
      `${R}/archive`,
      `${R}/archive.zip`,
      `${R}/compare?from=zeta&to=master`,
      `${R}/contributors`,
      `${R}/files?file_path=README.md&ref=master`,
    ];

    it('no credentials → 401 on every route', async () => {
      for (const path of [...routes(), `${R}/commits/master/statuses`]) {
        const res = await t.http.get(path);
        expect([path, res.status, res.body]).toEqual([path, 401, { message: '401 Unauthorized' }]);
      }
      await t.http.post(`${R}/branches`).send({ branch_name: 'x', ref: 'master' }).expect(401);
      await t.http.post(`${R}/files`).send({ file_path: 'x', branch_name: 'work', content: 'x', commit_message: 'm' }).expect(401);
    });

    it('a non-member of a private project gets 404 Project Not Found; an unknown project too', async () => {
      for (const path of routes()) {
        const res = await get(ollie, path);
        expect([path, res.status, res.body]).toEqual([path, 404, { message: '404 Project Not Found' }]);
      }
      expect((await get(alice, `${API}/projects/999999/repository/branches`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
      expect((await get(alice, `${API}/projects/alice%2Fnope/repository/tree`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
      expect((await get(ollie, `${API}/projects/alice%2Frepo/repository/tree`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
    });

    it('a guest of a private project gets 403 on download_code routes', async () => {
      for (const path of routes()) {
        const res = await get(gina, path);
        expect([path, res.status, res.body]).toEqual([path, 403, { message: '403 Forbidden' }]);
      }
      await as(gina, t.http.post(`${R}/branches`))
        .send({ branch_name: 'g', ref: 'master' })
        .expect(403);
      await as(gina, t.http.post(`${R}/tags`))
        .send({ tag_name: 'g', ref: 'master' })
        .expect(403);
      expect(
        (
          await as(gina, t.http.post(`${R}/commits/${c3}/comments`))
            .send({ note: 'guest' })
            .expect(403)
        ).body,
      ).toEqual({ message: '403 Forbidden' });
      await as(gina, t.http.post(`${P}/statuses/${c3}`))
        .send({ state: 'success' })
        .expect(403);
      await as(gina, t.http.post(`${R}/files`))
        .send({ file_path: 'g.txt', branch_name: 'work', content: 'x', commit_message: 'm' })
        .expect(403);
    });

    it('a public project is readable by any signed-in user, writable only by members', async () => {
      const pub = (
        await as(alice, t.http.post(`${API}/projects`))
          .send({ name: 'open', visibility_level: 20 })
          .expect(201)
      ).body;
      const O = `${API}/projects/${pub.id}/repository`;
      await as(alice, t.http.post(`${O}/files`))
        .send({ file_path: 'OPEN.md', branch_name: 'master', content: 'open\n', commit_message: 'open' })
        .expect(201);
      expect((await get(ollie, `${O}/tree`).expect(200)).body.map((e: Json) => e.name)).toEqual(['OPEN.md']);
      expect((await bytes(get(ollie, `${O}/blobs/master`).query({ filepath: 'OPEN.md' })).expect(200)).body.toString()).toBe('open\n');
      await get(ollie, `${O}/archive.zip`).expect(200);
      await get(ollie, `${O}/commits/master/statuses`).expect(200);
      await as(ollie, t.http.post(`${O}/commits/master/comments`))
        .send({ note: 'drive-by' })
        .expect(201);
      await as(ollie, t.http.post(`${O}/branches`))
        .send({ branch_name: 'mine', ref: 'master' })
        .expect(403);
      await as(ollie, t.http.post(`${O}/files`))
        .send({ file_path: 'x.txt', branch_name: 'master', content: 'x', commit_message: 'x' })
        .expect(403);
      await as(ollie, t.http.post(`${API}/projects/${pub.id}/statuses/master`))
        .send({ state: 'success' })
        .expect(403);
      // still no anonymous API access (spec decision 30)
      await t.http.get(`${O}/tree`).expect(401);
    });

    it('the project may be addressed by its URL-encoded path', async () => {
      const res = await get(carol, `${API}/projects/alice%2Frepo/repository/branches/master`).expect(200);
      expect(res.body.commit.id).toBe(c3);
    });
  });
});
