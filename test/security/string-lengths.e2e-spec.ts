import type { Test } from 'supertest';
import { ci } from '../helpers/ci';
import { Json, planning } from '../helpers/planning';
import { startTestApp, TestApp } from '../helpers/test-app';

/**
 * Over-long strings (issue 22, item 5). Every bounded character column of the schema (read from
 * information_schema, so that a new `varchar(n)` column is covered or this test fails) is either
 * reached from the API with a value one character longer than the column (it must answer 400, never
 * a 500 from the database, and where the field is the column's own, GitLab's message
 * `{"message":{"x":["is too long (maximum is n characters)"]}}`), or listed below with why no
 * input can reach it.
 */
describe('security: over-long strings', () => {
  let t: TestApp;
  let api: ReturnType<typeof planning>;
  let c: ReturnType<typeof ci>;
  const ctx: Json = {};

  const tooLong = (field: string, max: number) => ({ message: { [field]: [`is too long (maximum is ${max} characters)`] } });
  const over = (n: number) => 'x'.repeat(n + 1);

  /**
   * `table.column` → the request(s) that put an input into it, each with `n + 1` characters; `field`
   * set when the answer must be GitLab's field map for that field; otherwise the answer must be one of
   * `ok` (default 400, 404 or 422: a refusal that is not about the length, e.g. no such branch), never a 500.
   */
  type Probe = { send: (v: string) => Test; field?: string; ok?: number[] };
  const probes: Record<string, Probe[]> = {
    'commit_statuses.name': [
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/statuses/${ctx.p.sha}`).send({ state: 'pending', name: v }), field: 'name' },
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/statuses/${ctx.p.sha}`).send({ state: 'pending', context: v }), field: 'context' },
    ],
    'commit_statuses.ref': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/statuses/${ctx.p.sha}`).send({ state: 'pending', ref: v }), field: 'ref' }],
    'ci_pipelines.ref': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/statuses/${ctx.p.sha}`).send({ state: 'pending', ref: v }), field: 'ref' }],
    'ci_runners.description': [
      { send: (v) => c.api.register({ token: ctx.regToken, description: v }), field: 'description' },
      { send: (v) => api.put(t.root, `/runners/${ctx.runner.id}`).send({ description: v }), field: 'description' },
    ],
    // the runner's own info is cut to the column (it is not the user's input to refuse)
    'ci_runners.name': [{ send: (v) => c.api.requestBuild(ctx.runner.token).send({ token: ctx.runner.token, info: { name: v } }), ok: [404, 204] }],
    'ci_runners.version': [{ send: (v) => c.api.verify(ctx.runner.token).send({ token: ctx.runner.token, info: { version: v } }), ok: [404, 403] }],
    'ci_runners.revision': [{ send: (v) => c.api.register({ token: ctx.regToken, info: { revision: v } }), ok: [201] }],
    'ci_runners.platform': [{ send: (v) => c.api.register({ token: ctx.regToken, info: { platform: v } }), ok: [201] }],
    'ci_runners.architecture': [{ send: (v) => c.api.register({ token: ctx.regToken, info: { architecture: v } }), ok: [201] }],
    'issues.title': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/issues`).send({ title: v }), field: 'title' }],
    // must be one of the user's own addresses: refused for that, whatever its length
    'notification_settings.notification_email': [
      { send: (v) => api.put(t.root, '/notification_settings').send({ notification_email: `${v}@example.com` }), ok: [400] },
    ],
    'merge_requests.title': [
      {
        send: (v) => api.post(t.root, `/projects/${ctx.p.id}/merge_requests`).send({ title: v, source_branch: 'feature', target_branch: 'master' }),
        field: 'title',
      },
    ],
    'merge_requests.source_branch': [
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/merge_requests`).send({ title: 'mr', source_branch: v, target_branch: 'master' }) },
    ],
    'merge_requests.target_branch': [
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/merge_requests`).send({ title: 'mr', source_branch: 'feature', target_branch: v }) },
    ],
    'milestones.title': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/milestones`).send({ title: v }), field: 'title' }],
    'labels.title': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/labels`).send({ name: v, color: '#ff0000' }) }],
    'labels.color': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/labels`).send({ name: 'c', color: v }) }],
    'snippets.title': [
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/snippets`).send({ title: v, file_name: 'a.rb', code: 'x', visibility_level: 0 }), field: 'title' },
    ],
    'snippets.file_name': [
      {
        send: (v) => api.post(t.root, `/projects/${ctx.p.id}/snippets`).send({ title: 't', file_name: v, code: 'x', visibility_level: 0 }),
        field: 'file_name',
      },
    ],
    'keys.title': [{ send: (v) => api.post(t.root, '/user/keys').send({ title: v, key: ctx.key }), field: 'title' }],
    'emails.email': [{ send: (v) => api.post(t.root, '/user/emails').send({ email: `${v}@example.com` }) }],
    'ci_variables.key': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/variables`).send({ key: v, value: 'v' }) }],
    'projects.name': [{ send: (v) => api.post(t.root, '/projects').send({ name: v }), field: 'name' }],
    'projects.path': [{ send: (v) => api.post(t.root, '/projects').send({ name: 'p', path: v }), field: 'path' }],
    'projects.import_url': [{ send: (v) => api.post(t.root, '/projects').send({ name: 'imp', import_url: `http://example.com/${v}` }), field: 'import_url' }],
    'projects.default_branch': [{ send: (v) => api.put(t.root, `/projects/${ctx.p.id}`).send({ default_branch: v }) }],
    'namespaces.name': [{ send: (v) => api.post(t.root, '/groups').send({ name: v, path: 'long-name-group' }), field: 'name' }],
    'namespaces.path': [{ send: (v) => api.post(t.root, '/groups').send({ name: 'g', path: v }), field: 'path' }],
    'users.name': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ name: v }), field: 'name' }],
    'users.username': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ username: v }) }],
    'users.email': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ email: `${v}@example.com` }) }],
    'users.bio': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ bio: v }), field: 'bio' }],
    'users.skype': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ skype: v }), field: 'skype' }],
    'users.linkedin': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ linkedin: v }), field: 'linkedin' }],
    'users.twitter': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ twitter: v }), field: 'twitter' }],
    'users.website_url': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ website_url: v }), field: 'website_url' }],
    'users.location': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ location: v }), field: 'location' }],
    'identities.provider': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ provider: v, extern_uid: 'u' }), field: 'provider' }],
    'identities.extern_uid': [{ send: (v) => api.put(t.root, `/users/${t.root.id}`).send({ provider: 'ldap', extern_uid: v }), field: 'extern_uid' }],
    'application_settings.home_page_url': [{ send: (v) => api.put(t.root, '/application/settings').send({ home_page_url: `http://example.com/${v}` }) }],
    'application_settings.after_sign_out_path': [
      { send: (v) => api.put(t.root, '/application/settings').send({ after_sign_out_path: `http://example.com/${v}` }) },
    ],
    'web_hooks.url': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/hooks`).send({ url: `http://example.com/${v}` }), ok: [422] }],
    'protected_branches.name': [{ send: (v) => api.put(t.root, `/projects/${ctx.p.id}/repository/branches/${v}/protect`) }],
    'releases.tag': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/repository/tags/${v}/release`).send({ description: 'd' }) }],
    'commit_comments.commit_sha': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/repository/commits/${v}/comments`).send({ note: 'n' }) }],
    'environments.name': [{ send: (v) => api.post(t.root, `/projects/${ctx.p.id}/environments`).send({ name: v }), field: 'name' }],
    'environments.external_url': [
      { send: (v) => api.post(t.root, `/projects/${ctx.p.id}/environments`).send({ name: 'long-url', external_url: `http://example.com/${v}` }) },
    ],
    'oauth_access_tokens.scopes': [{ send: (v) => t.http.post('/oauth/token').send({ grant_type: 'password', username: 'root', password: 'x', scope: v }) }],
  };

  /** Columns no request writes a value of its own into: set by the server from fixed or generated values. */
  const notFromInput: Record<string, string> = {
    'application_settings.runners_registration_token_digest': 'a digest (64 hex)',
    'ci_builds.artifacts_file': "the uploaded file's name, cleaned and cut to 200 characters (safeFileName)",
    'ci_builds.token_digest': 'a digest',
    'ci_builds.when': 'from .gitlab-ci.yml, validated against a fixed list',
    'ci_pipelines.before_sha': 'a git object id',
    'ci_pipelines.sha': 'a git object id',
    'ci_pipelines.status': 'a fixed state',
    'ci_runners.token_digest': 'a digest',
    'ci_triggers.token_digest': 'a digest',
    'commit_comments.line_type': "'new' or 'old' (validated)",
    'commit_statuses.sha': 'a git object id (the commit must exist)',
    'commit_statuses.stage': 'from .gitlab-ci.yml stages, or the fixed "external" of a commit status',
    'commit_statuses.status': 'a fixed state',
    'deployments.deployable_type': "the fixed 'CommitStatus'",
    'deployments.on_stop': 'a job name from .gitlab-ci.yml (the grammar bounds job names to 255 characters)',
    'deployments.ref': "the deployed build's ref (commit_statuses.ref, the same bound)",
    'deployments.sha': 'a git object id',
    'environments.environment_type': "the part of the environment's name before its first '/' (bounded by the name)",
    'environments.slug': 'generated from the name, cut to 24 characters',
    'environments.state': 'a fixed state',
    'events.action': 'a fixed action name',
    'events.target_type': 'a fixed type name',
    'internal_ids.usage': 'a fixed name',
    'issues.state': 'a fixed state',
    'keys.fingerprint': 'computed from the key',
    'keys.type': "the fixed 'DeployKey' (null for a user's key)",
    'label_links.target_type': 'a fixed type name',
    'lfs_objects.oid': 'a SHA-256 object id (64 hex digits, checked against the content)',
    'login_attempts.key': 'a digest',
    'merge_requests.merge_commit_sha': 'a git object id',
    'merge_requests.merge_status': 'a fixed state',
    'merge_requests.merge_when_build_succeeds_sha': 'a git object id',
    'merge_requests.state': 'a fixed state',
    'milestones.state': 'a fixed state',
    'namespaces.kind': "'user' or 'group'",
    'notes.attachment': 'never written by the API',
    'notes.noteable_type': 'a fixed type name',
    'notification_settings.source_type': 'a fixed type name (project or group settings)',
    'oauth_access_tokens.refresh_token_digest': 'a digest',
    'oauth_access_tokens.token_digest': 'a digest',
    'projects.build_coverage_regex': 'not writable through the v3 API',
    'projects.import_status': 'a fixed state',
    'projects.runners_token_digest': 'a digest',
    'request_rate_counters.key': 'a digest',
    'subscriptions.subscribable_type': 'a fixed type name',
    'users.encrypted_password': 'a bcrypt hash',
    'users.private_token_digest': 'a digest',
    'users.state': 'a fixed state',
    'web_hook_logs.event': 'a fixed event header',
    'web_hook_logs.trigger': 'a fixed event name',
    'web_hooks.type': "'ProjectHook' or 'SystemHook'",
  };

  beforeAll(async () => {
    t = await startTestApp();
    api = planning(t);
    c = ci(t);
    ctx.p = await c.project(t.root, null);
    await api.post(t.root, `/projects/${ctx.p.id}/repository/branches`).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    ctx.regToken = await c.registrationToken();
    ctx.runner = await c.registerRunner({ description: 'short' });
    ctx.key = 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC2 lengths@test';
  });
  afterAll(() => t.close());

  it('every bounded character column is probed from the API or said to take no input', async () => {
    const cols = await t.sql<{ col: string }>(
      `SELECT table_name || '.' || column_name AS col FROM information_schema.columns
        WHERE table_schema = 'public' AND character_maximum_length IS NOT NULL ORDER BY 1`,
    );
    const unaccounted = cols.map((r) => r.col).filter((col) => !probes[col] && !notFromInput[col]);
    expect(unaccounted).toEqual([]);
  });

  it('a value one character longer than its column is refused (400 with the field map where it is the field), never a 500', async () => {
    const cols = await t.sql<{ col: string; max: number }>(
      `SELECT table_name || '.' || column_name AS col, character_maximum_length AS max FROM information_schema.columns
        WHERE table_schema = 'public' AND character_maximum_length IS NOT NULL ORDER BY 1`,
    );
    const failures: string[] = [];
    let sent = 0;
    for (const { col, max } of cols) {
      for (const probe of probes[col] ?? []) {
        const res = await probe.send(over(max));
        sent++;
        const what = `${col} (${max}): ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
        if (probe.field) {
          // GitLab's map may name other fields too (a derived path, a key that is also invalid)
          const msg = res.body?.message;
          if (res.status !== 400 || JSON.stringify(msg?.[probe.field]) !== JSON.stringify(tooLong(probe.field, max).message[probe.field])) failures.push(what);
        } else if (res.status >= 500 || !(probe.ok ?? [400, 404, 422]).includes(res.status)) {
          failures.push(what);
        }
      }
    }
    console.log(`over-long strings: ${cols.length} bounded columns, ${sent} requests`);
    expect(failures).toEqual([]);
  });

  it('the runner description is cut nowhere: 255 characters are stored as given on register and on PUT /runners/:id', async () => {
    const d = 'd'.repeat(255);
    const r = (await c.api.register({ token: ctx.regToken, description: d }).expect(201)).body;
    expect((await api.get(t.root, `/runners/${r.id}`).expect(200)).body.description).toBe(d);
    await api
      .put(t.root, `/runners/${r.id}`)
      .send({ description: d.replace(/d$/, 'e') })
      .expect(200);
    expect((await api.get(t.root, `/runners/${r.id}`).expect(200)).body.description).toBe(d.replace(/d$/, 'e'));
  });
});
