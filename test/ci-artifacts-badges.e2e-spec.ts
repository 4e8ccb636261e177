import { ci, Json, waitFor } from './helpers/ci';
import { planning, Team } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * Issue 38 item 5, as GitLab 8.17: a ref's artifacts (`GET /projects/:id/builds/artifacts/:ref_name/download
 * ?job=`), keeping artifacts (`POST .../builds/:id/artifacts/keep`), the build and coverage badges
 * (`/:namespace/:project/badges/:ref/build.svg`, `coverage.svg`) and the trigger's ref path
 * (`POST /projects/:id/ref/:ref/trigger/builds`).
 */

// two jobs of one stage: `pack` uploads artifacts, `lint` does not
const YML = 'pack:\n  script: make\nlint:\n  script: make lint\n';
const SLASHED = 'feature/x';

describe('CI: artifacts by ref, keep, badges, the ref trigger path (8.17)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Team;
  let priv: { id: number; path: string };
  let pub: { id: number; path: string };
  let runner: { token: string };
  let pubRunner: { token: string };
  /** Build ids of each run, by the artifact it uploaded and the job. */
  const runs: Record<string, Record<string, number>> = {};

  const finished = (projectId: number, ref: string) =>
    t.sql<Json>(`SELECT p.id, p.status FROM ci_pipelines p WHERE p.project_id = $1 AND p.ref = $2 ORDER BY p.id DESC LIMIT 1`, [projectId, ref]);

  /** Waits for the ref's newest pipeline, claims its builds, uploads `artifact` for `pack` and ends them in `state`. */
  async function run(projectId: number, runnerToken: string, ref: string, artifact: string, state: 'success' | 'failed' = 'success', before = 0) {
    const pipelineId = await waitFor(async () => {
      const [p] = await finished(projectId, ref);
      return p && p.id > before ? (p.id as number) : undefined;
    }, `pipeline of ${ref}`);
    const ids: Record<string, number> = {};
    for (let i = 0; i < 2; i++) {
      const b = await waitFor(async () => {
        const r = await c.api.requestBuild(runnerToken);
        return r.status === 201 ? (r.body as Json) : undefined;
      }, `a build of ${ref}`);
      expect(b.ref).toBe(ref);
      ids[b.name] = b.id;
      if (b.name === 'pack') {
        await t.http.post(`/ci/api/v1/builds/${b.id}/artifacts`).set('BUILD-TOKEN', b.token).attach('file', Buffer.from(artifact), 'art.zip').expect(201);
      }
      await c.api.update(b.id, { token: runnerToken, state }).expect(200);
    }
    await waitFor(async () => ((await finished(projectId, ref))[0]?.status === state ? true : undefined), `pipeline of ${ref} ${state}`);
    runs[artifact] = ids;
    return { pipelineId, ids };
  }

  /** A new commit on `branch` (its pipeline starts on the push). */
  const commit = async (projectId: number, branch: string, file: string) =>
    pl
      .post(team.owner, `/projects/${projectId}/repository/files`)
      .send({ file_path: file, branch_name: branch, content: `${file}\n`, commit_message: `add ${file}` })
      .expect(201);

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
    const p = await pl.project(team, 0, { public_builds: false });
    priv = { id: p.id, path: p.path_with_namespace };
    const q = await pl.project(team, 20);
    pub = { id: q.id, path: q.path_with_namespace };
    for (const x of [priv, pub]) {
      await pl
        .post(team.owner, `/projects/${x.id}/repository/files`)
        .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' })
        .expect(201);
    }
    const token = async (id: number) => (await pl.get(team.owner, `/projects/${id}`).expect(200)).body.runners_token as string;
    runner = (await c.api.register({ token: await token(priv.id) }).expect(201)).body;
    pubRunner = (await c.api.register({ token: await token(pub.id) }).expect(201)).body;
    await run(priv.id, runner.token, 'master', 'art-master-1');
    await pl.post(team.owner, `/projects/${priv.id}/repository/branches`).send({ branch_name: SLASHED, ref: 'master' }).expect(201);
    await run(priv.id, runner.token, SLASHED, 'art-feature');
  }, 240_000);
  afterAll(() => t.close());

  const download = (ref: string, job: string | undefined, project: number | string = priv.id) =>
    `/projects/${project}/builds/artifacts/${ref}/download${job === undefined ? '' : `?job=${encodeURIComponent(job)}`}`;
  const binary = (req: ReturnType<ReturnType<typeof planning>['get']>) =>
    req.buffer(true).parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });

  describe('GET /projects/:id/builds/artifacts/:ref_name/download?job=', () => {
    it("streams the job's artifacts of the ref's latest successful pipeline, as the build's own download does (reporter: read_build)", async () => {
      const res = await binary(pl.get(team.reporter, download('master', 'pack'))).expect(200);
      expect((res.body as Buffer).toString()).toBe('art-master-1');
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-disposition']).toBe('attachment; filename=art.zip');
      expect(res.headers['content-transfer-encoding']).toBe('binary');
      const own = await binary(pl.get(team.reporter, `/projects/${priv.id}/builds/${runs['art-master-1'].pack}/artifacts`)).expect(200);
      expect(own.body).toEqual(res.body);
      // the project by its path as well
      const byPath = await binary(pl.get(team.reporter, download('master', 'pack', encodeURIComponent(priv.path)))).expect(200);
      expect((byPath.body as Buffer).toString()).toBe('art-master-1');
    });

    it('a ref with a slash, URL-encoded or raw', async () => {
      for (const ref of [encodeURIComponent(SLASHED), SLASHED]) {
        const res = await binary(pl.get(team.developer, download(ref, 'pack'))).expect(200);
        expect((res.body as Buffer).toString()).toBe('art-feature');
      }
    });

    it('the newest successful pipeline wins; a newer failed one is passed over', async () => {
      const [last] = await finished(priv.id, 'master');
      await commit(priv.id, 'master', 'second.txt');
      await run(priv.id, runner.token, 'master', 'art-master-2', 'success', last.id);
      expect((await binary(pl.get(team.reporter, download('master', 'pack'))).expect(200)).body.toString()).toBe('art-master-2');
      const [second] = await finished(priv.id, 'master');
      await commit(priv.id, 'master', 'third.txt');
      await run(priv.id, runner.token, 'master', 'art-master-3-failed', 'failed', second.id);
      expect((await binary(pl.get(team.reporter, download('master', 'pack'))).expect(200)).body.toString()).toBe('art-master-2');
    });

    it("404 as 8.17's find_by!: no such ref, no such job, a job without artifacts (404 Not found)", async () => {
      for (const path of [
        download('nope', 'pack'),
        download('master', 'nope'),
        download('master', 'lint'),
        download('%2e%2e', 'pack'),
        download('mas%00ter', 'pack'),
      ]) {
        const res = await pl.get(team.reporter, path);
        expect([path, res.status, res.body]).toEqual([path, 404, { message: '404 Not found' }]);
      }
    });

    it('400 without job; 401 without credentials; 404 for a stranger; 403 for a guest (no read_build in a private project)', async () => {
      expect((await pl.get(team.reporter, download('master', undefined))).body).toEqual({ message: '400 (Bad request) "job" not given' });
      expect((await pl.get(team.reporter, download('master', undefined))).status).toBe(400);
      expect((await t.http.get(`/api/v3${download('master', 'pack')}`)).status).toBe(401);
      const stranger = await pl.get(team.stranger, download('master', 'pack'));
      expect([stranger.status, stranger.body]).toEqual([404, { message: '404 Project Not Found' }]);
      expect((await pl.get(team.guest, download('master', 'pack'))).status).toBe(403);
    });
  });

  describe('POST /projects/:id/builds/:build_id/artifacts/keep', () => {
    it('200 with the build, artifacts_expire_at cleared (developer: update_build)', async () => {
      const id = runs['art-master-2'].pack;
      await t.sql(`UPDATE ci_builds SET artifacts_expire_at = now() + interval '7 days' WHERE id = $1`, [id]);
      const res = await pl.post(team.developer, `/projects/${priv.id}/builds/${id}/artifacts/keep`).expect(200);
      await expectSchema(res, 'Build');
      expect(res.body).toMatchObject({ id, name: 'pack', status: 'success', artifacts_file: { filename: 'art.zip', size: 12 } });
      const [row] = await t.sql<Json>(`SELECT artifacts_expire_at FROM ci_builds WHERE id = $1`, [id]);
      expect(row.artifacts_expire_at).toBeNull();
      // kept: still downloadable
      expect((await binary(pl.get(team.reporter, `/projects/${priv.id}/builds/${id}/artifacts`)).expect(200)).body.toString()).toBe('art-master-2');
    });

    it('404 when the build has no artifacts or they have expired; 404 for an unknown build or one of another project', async () => {
      const { lint, pack } = runs['art-master-2'];
      const none = await pl.post(team.developer, `/projects/${priv.id}/builds/${lint}/artifacts/keep`);
      expect([none.status, none.body]).toEqual([404, { message: '404 Not Found' }]);
      const expired = runs['art-feature'].pack;
      await t.sql(`UPDATE ci_builds SET artifacts_expire_at = now() - interval '1 minute' WHERE id = $1`, [expired]);
      expect((await pl.post(team.developer, `/projects/${priv.id}/builds/${expired}/artifacts/keep`)).status).toBe(404);
      const [row] = await t.sql<Json>(`SELECT artifacts_expire_at FROM ci_builds WHERE id = $1`, [expired]);
      expect(row.artifacts_expire_at).not.toBeNull(); // not kept
      for (const path of [
        `/projects/${priv.id}/builds/999999/artifacts/keep`,
        `/projects/${priv.id}/builds/abc/artifacts/keep`,
        `/projects/${pub.id}/builds/${pack}/artifacts/keep`,
      ]) {
        const res = await pl.post(team.owner, path);
        expect([path, res.status, res.body]).toEqual([path, 404, { message: '404 Build Not Found' }]);
      }
    });

    it('401 without credentials; 404 for a stranger; 403 for a reporter (the role just below developer) and a guest', async () => {
      const { pack } = runs['art-master-2'];
      const path = `/projects/${priv.id}/builds/${pack}/artifacts/keep`;
      expect((await t.http.post(`/api/v3${path}`)).status).toBe(401);
      expect((await pl.post(team.stranger, path)).status).toBe(404);
      expect((await pl.post(team.reporter, path)).body).toEqual({ message: '403 Forbidden' });
      expect((await pl.post(team.reporter, path)).status).toBe(403);
      expect((await pl.post(team.guest, path)).status).toBe(403);
    });
  });

  describe('badges: /:namespace/:project/badges/:ref/build.svg and coverage.svg', () => {
    const badge = (project: { path: string }, ref: string, kind: 'build' | 'coverage', query = '') => `/${project.path}/badges/${ref}/${kind}.svg${query}`;
    const asUser = (path: string, token?: string) => (token ? t.http.get(path).set('PRIVATE-TOKEN', token) : t.http.get(path));
    /** The value text and colour of a badge (the second `<path>`'s fill and the last `<text>`). */
    const read = (svg: string) => ({
      key: /<text[^>]*y="14">\s*([^<]*?)\s*<\/text>/.exec(svg)?.[1],
      value: [...svg.matchAll(/<text[^>]*y="14">\s*([^<]*?)\s*<\/text>/g)].map((m) => m[1])[1],
      color: [...svg.matchAll(/<path fill="([^"]+)"/g)].map((m) => m[1])[1],
      width: /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="(\d+)"/.exec(svg)?.[1],
    });

    it("build.svg: 8.17's template, status text and colour, no-cache headers and a policy that runs nothing", async () => {
      const res = await asUser(badge(priv, 'master', 'build'), team.guest.token)
        .buffer(true)
        .expect(200);
      expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache, no-store, max-age=0, must-revalidate');
      expect(res.headers['pragma']).toBe('no-cache');
      expect(res.headers['expires']).toBe('Fri, 01 Jan 1990 00:00:00 GMT');
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'unsafe-inline'/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const svg = res.body.toString();
      // the master pipeline's latest run failed (the previous test block): 8.17 shows the pipeline status of the ref's head
      expect(read(svg)).toEqual({ key: 'build', value: 'failed', color: '#e05d44', width: '92' });
      expect(svg).toContain('<path fill="#555"');
      const ok = (
        await asUser(badge(priv, encodeURIComponent(SLASHED), 'build'), team.guest.token)
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(read(ok)).toEqual({ key: 'build', value: 'success', color: '#4c1', width: '92' });
      const raw = (
        await asUser(badge(priv, SLASHED, 'build'), team.guest.token)
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(raw).toBe(ok);
    });

    it('build.svg: pending, then running, while the head pipeline runs; unknown for a SHA (no pipeline of that ref) or no such ref', async () => {
      // the public project's pipeline (its .gitlab-ci.yml commit) has not been run
      await waitFor(async () => ((await finished(pub.id, 'master'))[0]?.status === 'pending' ? true : undefined), 'pending pipeline');
      const pending = (
        await asUser(badge(pub, 'master', 'build'))
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(read(pending)).toMatchObject({ value: 'pending', color: '#dfb317' });
      // one of its two builds done, the other pending: running (8.17's pipeline status)
      const b = (await c.api.requestBuild(pubRunner.token).expect(201)).body as Json;
      await c.api.update(b.id, { token: pubRunner.token, state: 'success' }).expect(200);
      await waitFor(async () => ((await finished(pub.id, 'master'))[0]?.status === 'running' ? true : undefined), 'running pipeline');
      const running = (
        await asUser(badge(pub, 'master', 'build'))
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(read(running)).toMatchObject({ value: 'running', color: '#dfb317' });
      expect(b.ref).toBe('master');
      const [head] = await finished(pub.id, 'master');
      const [{ sha }] = await t.sql<Json>(`SELECT sha FROM ci_pipelines WHERE id = $1`, [head.id]);
      for (const ref of [sha, 'no-such-branch', '%2E%2E', 'mas%00ter']) {
        const svg = (
          await asUser(badge(pub, ref, 'build'))
            .buffer(true)
            .expect(200)
        ).body.toString();
        expect([ref, read(svg)]).toEqual([ref, { key: 'build', value: 'unknown', color: '#9f9f9f', width: '92' }]);
      }
    });

    it('coverage.svg: the pipeline mean or one job, a whole percentage coloured by 8.17 ranges; unknown without coverage', async () => {
      const { pack, lint } = runs['art-feature'];
      const get = async (query = '') =>
        read(
          (
            await asUser(badge(priv, encodeURIComponent(SLASHED), 'coverage', query), team.guest.token)
              .buffer(true)
              .expect(200)
          ).body.toString(),
        );
      expect(await get()).toEqual({ key: 'coverage', value: 'unknown', color: '#9f9f9f', width: '120' });
      await t.sql(`UPDATE ci_builds SET coverage = CASE id WHEN $1 THEN 100 ELSE 90.5 END WHERE id IN ($1, $2)`, [pack, lint]);
      expect(await get()).toEqual({ key: 'coverage', value: '95%', color: '#4c1', width: '98' }); // mean 95.25 → 95
      expect(await get('?job=lint')).toEqual({ key: 'coverage', value: '90%', color: '#a3c51c', width: '98' });
      await t.sql(`UPDATE ci_builds SET coverage = 80.99 WHERE id = $1`, [lint]);
      expect(await get('?job=lint')).toEqual({ key: 'coverage', value: '80%', color: '#dfb317', width: '98' });
      await t.sql(`UPDATE ci_builds SET coverage = 12 WHERE id = $1`, [lint]);
      expect(await get('?job=lint')).toEqual({ key: 'coverage', value: '12%', color: '#e05d44', width: '98' });
      expect(await get('?job=nope')).toMatchObject({ value: 'unknown', color: '#9f9f9f' });
      const nul = (
        await asUser(badge(priv, 'mas%00ter', 'coverage'), team.guest.token)
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(read(nul)).toMatchObject({ value: 'unknown', color: '#9f9f9f' });
      expect((await asUser(badge(priv, 'master', 'coverage', '?job=a%00b'), team.guest.token)).status).toBe(400);
      // a ref whose latest successful pipeline has no coverage, and one without any successful pipeline
      expect((await get('?job=')).value).toBe('56%'); // (100 + 12) / 2
      const none = (
        await asUser(badge(pub, 'master', 'coverage'))
          .buffer(true)
          .expect(200)
      ).body.toString();
      expect(read(none)).toMatchObject({ value: 'unknown', color: '#9f9f9f' });
    });

    it('a private project: 404 for anonymous callers and strangers, the same answer as for no project at all', async () => {
      const missing = await t.http.get(`/${priv.path}-missing/badges/master/build.svg`);
      expect(missing.status).toBe(404);
      for (const kind of ['build', 'coverage'] as const) {
        for (const token of [undefined, team.stranger.token]) {
          const res = await asUser(badge(priv, 'master', kind), token);
          expect([kind, res.status, res.body]).toEqual([kind, 404, missing.body]);
          expect(res.headers['content-type']).not.toMatch(/svg/);
        }
      }
      // a public project's badge needs no credentials
      expect((await t.http.get(badge(pub, 'master', 'build'))).status).toBe(200);
    });

    it('anything but build.svg and coverage.svg is 404', async () => {
      for (const path of [
        `/${priv.path}/badges/master/build.png`,
        `/${priv.path}/badges/master/build`,
        `/${priv.path}/badges/master`,
        `/${priv.path}/badges/build.svg`,
      ]) {
        expect([path, (await asUser(path, team.owner.token)).status]).toEqual([path, 404]);
      }
    });

    it('user-controlled ref and job names never reach the document as markup', async () => {
      const evil = `x"/><script>alert(1)</script><a_b="`;
      await pl.post(team.owner, `/projects/${pub.id}/repository/branches`).send({ branch_name: evil, ref: 'master' }).expect(201);
      for (const path of [
        badge(pub, encodeURIComponent(evil), 'build'),
        badge(pub, encodeURIComponent(evil), 'coverage', `?job=${encodeURIComponent(evil)}`),
      ]) {
        const res = await t.http.get(path).buffer(true).expect(200);
        const svg = (res.body as Buffer).toString();
        expect(svg).not.toMatch(/<script|alert\(1\)|<a_b/);
        expect(svg.match(/<[a-zA-Z]+/g)!.every((tag) => ['<svg', '<linearGradient', '<stop', '<mask', '<rect', '<g', '<path', '<text'].includes(tag))).toBe(
          true,
        );
        expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      }
    });
  });

  describe('POST /projects/:id/ref/:ref/trigger/builds', () => {
    let token: string;
    let otherToken: string;
    beforeAll(async () => {
      token = (await pl.post(team.master, `/projects/${priv.id}/triggers`).expect(201)).body.token;
      otherToken = (await pl.post(team.master, `/projects/${pub.id}/triggers`).expect(201)).body.token;
    });

    it('201 {id, variables} without login, as POST /projects/:id/trigger/builds; the ref from the path (raw or %2F-encoded) wins', async () => {
      const before = (await c.pipelines(priv.id)).length;
      const res = await t.http
        .post(`/api/v3/projects/${priv.id}/ref/master/trigger/builds`)
        .send({ token, ref: 'no-such-ref', variables: { DEPLOY: 'yes' } })
        .expect(201);
      await expectSchema(res, 'TriggerRequest');
      expect(res.body).toEqual({ id: expect.any(Number), variables: { DEPLOY: 'yes' } });
      const byPath = await t.http
        .post(`/api/v3/projects/${encodeURIComponent(priv.path)}/ref/${encodeURIComponent(SLASHED)}/trigger/builds`)
        .send({ token })
        .expect(201);
      expect(byPath.body).toEqual({ id: expect.any(Number), variables: null });
      const made = (await c.pipelines(priv.id)).slice(before);
      expect(made.map((p) => p.ref)).toEqual(['master', SLASHED]);
      const [req] = await t.sql<Json>(`SELECT variables FROM ci_trigger_requests WHERE id = $1`, [res.body.id]);
      expect(JSON.stringify(req.variables)).toContain('DEPLOY');
    });

    it("400 without token, for bad variables and a ref with nothing to build; 404 unknown token or project; 401 another project's token", async () => {
      const post = (path: string, body: Json) => t.http.post(`/api/v3/projects/${path}/trigger/builds`).send(body);
      const cases: [string, Json, number, Json][] = [
        [`${priv.id}/ref/master`, {}, 400, { message: '400 (Bad request) "token" not given' }],
        [`${priv.id}/ref/master`, { token, variables: { A: 1 } }, 400, { message: '400 variables needs to be a map of key-valued strings' }],
        [`${priv.id}/ref/no-such-ref`, { token }, 400, { message: '400 No builds created' }],
        [`${priv.id}/ref/master`, { token: 'nope' }, 404, { message: '404 Trigger Not Found' }],
        [`999999/ref/master`, { token }, 404, { message: '404 Project Not Found' }],
        [`${priv.id}/ref/master`, { token: otherToken }, 401, { message: '401 Unauthorized' }],
      ];
      for (const [path, body, status, message] of cases) {
        const res = await post(path, body);
        const flat = await post(path.replace(/\/ref\/(.*)$/, ''), { ...body, ref: decodeURIComponent(path.replace(/^.*\/ref\//, '')) });
        // the same answer as the path without the ref
        expect([path, res.status, res.body]).toEqual([path, status, message]);
        expect([path, flat.status, flat.body]).toEqual([path, status, message]);
      }
    });
  });
});
