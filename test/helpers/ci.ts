import type { Test } from 'supertest';
import { RunnersService } from '../../src/ci/runners/runners.service';
import type { TestApp, TestUser } from './test-app';

/** What a gitlab-ci-multi-runner 1.3.5 sends (runner-protocol.md §2). */
export const RUNNER_UA = 'gitlab-ci-multi-runner 1.3.5 (v1.3.5; go1.19.8; linux/amd64)';
export const RUNNER_INFO = {
  name: 'gitlab-ci-multi-runner',
  version: '1.3.5',
  revision: '3af07be',
  platform: 'linux',
  architecture: 'amd64',
  executor: 'shell',
  features: { variables: true, image: false, services: false, features: false, cache: false },
};
const V1 = '/ci/api/v1';

export type Json = Record<string, any>;

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, what = 'condition', timeoutMs = 15000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function ci(t: TestApp) {
  /** A JSON call exactly as the runner makes it (Content-Type, Accept, User-Agent). */
  const runner = (req: Test, body?: Json) => {
    req.set('User-Agent', RUNNER_UA).set('Accept', 'application/json');
    return body === undefined ? req : req.set('Content-Type', 'application/json').send(JSON.stringify(body));
  };
  const api = {
    register: (body: Json) => runner(t.http.post(`${V1}/runners/register.json`), { info: { ...RUNNER_INFO, executor: undefined }, ...body }),
    unregister: (token: string) => runner(t.http.delete(`${V1}/runners/delete`), { token }),
    verify: (token: string) => runner(t.http.put(`${V1}/builds/-1`), { token }),
    requestBuild: (token: string) => runner(t.http.post(`${V1}/builds/register.json`), { info: RUNNER_INFO, token }),
    update: (id: number, body: Json) => runner(t.http.put(`${V1}/builds/${id}.json`), { info: RUNNER_INFO, ...body }),
    patchTrace: (id: number, buildToken: string, start: number, part: string | Buffer) =>
      t.http
        .patch(`${V1}/builds/${id}/trace.txt`)
        .set('User-Agent', RUNNER_UA)
        .set('Content-Type', 'text/plain')
        .set('BUILD-TOKEN', buildToken)
        .set('Content-Range', `${start}-${start + Buffer.byteLength(part)}`)
        .send(part),
  };

  async function registrationToken(): Promise<string> {
    return t.app.app.get(RunnersService).registrationToken();
  }

  async function registerRunner(body: Json = {}): Promise<{ id: number; token: string }> {
    const res = await api.register({ token: await registrationToken(), ...body });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A project of `owner` with `.gitlab-ci.yml` committed on master through the files API; waits for its pipeline. */
  async function project(
    owner: TestUser,
    yml: string | null,
    extra: Json = {},
  ): Promise<{ id: number; path: string; runnersToken: string; sha: string; pipelineId?: number }> {
    const p = await t.http
      .post('/api/v3/projects')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ name: `ci-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`, ...extra });
    if (p.status !== 201) throw new Error(`project: ${p.status} ${JSON.stringify(p.body)}`);
    const shown = await t.http.get(`/api/v3/projects/${p.body.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
    const f = await t.http
      .post(`/api/v3/projects/${p.body.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: yml === null ? 'README.md' : '.gitlab-ci.yml', branch_name: 'master', content: yml ?? 'hello', commit_message: 'add ci' });
    if (f.status !== 201) throw new Error(`file: ${f.status} ${JSON.stringify(f.body)}`);
    const commit = await t.http.get(`/api/v3/projects/${p.body.id}/repository/commits/master`).set('PRIVATE-TOKEN', owner.token).expect(200);
    let pipelineId: number | undefined;
    if (yml !== null) {
      pipelineId = await waitFor(async () => (await pipelines(p.body.id))[0]?.id, 'pipeline');
    }
    return { id: p.body.id, path: p.body.path_with_namespace, runnersToken: shown.body.runners_token, sha: commit.body.id, pipelineId };
  }

  function pipelines(projectId: number): Promise<Json[]> {
    return t.sql(`SELECT * FROM ci_pipelines WHERE project_id = $1 ORDER BY id`, [projectId]);
  }

  function builds(projectId: number): Promise<Json[]> {
    return t.sql(
      `SELECT s.id, s.name, s.stage, s.status, s.ref, s.sha, b.stage_idx, b.runner_id, b.pipeline_id, b.trace_size::int AS trace_size
       FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.project_id = $1 ORDER BY s.id`,
      [projectId],
    );
  }

  return { api, registrationToken, registerRunner, project, pipelines, builds };
}
