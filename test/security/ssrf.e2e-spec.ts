import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outboundDns } from '../../src/common/net/outbound-url';
import { GitService } from '../../src/git/git.service';
import { GitCli } from '../helpers/git-cli';
import { HookReceiver, sleep } from '../helpers/hook-receiver';
import { startTestApp, TestApp } from '../helpers/test-app';

const API = '/api/v3';
type Json = Record<string, any>;

/**
 * SSRF: one outbound-request guard (src/common/net/outbound-url.ts, address classes from ipaddr.js)
 * in front of every URL the server fetches: project imports (`import_url`), project hooks and system
 * hooks, when saved and again right before each delivery. Every form below is refused through every
 * entry point by default; with the admin's local-requests setting on, loopback is reachable, but the
 * non-http schemes and ambiguous URLs never are.
 */
describe('security: SSRF through imports and hooks', () => {
  let t: TestApp;
  let rx: HookReceiver;
  let git: GitCli;
  let home: string;
  let projectId: number;
  let existingHookId: number;
  let seq = 0;
  const realLookup = outboundDns.lookup;
  /** Names the test resolves itself; each entry gives the answers of successive lookups (the last one repeats). */
  const fakeDns = new Map<string, { answers: string[][]; calls: number }>();
  const fake = (name: string, ...answers: string[][]) => fakeDns.set(name, { answers, calls: 0 });

  const root = <T extends { set(k: string, v: string): T }>(r: T) => r.set('PRIVATE-TOKEN', t.root.token);
  const allowLocal = (on: boolean) =>
    root(t.http.put(`${API}/application/settings`))
      .send({ allow_local_requests_from_hooks_and_services: on })
      .expect(200);

  /** Every way of writing a local address (or a name that leads to one) that the guard must refuse. */
  const localForms = (port: number): [string, string][] => [
    ['127.0.0.1', `http://127.0.0.1:${port}/x.git`],
    ['127.1 (short form)', `http://127.1:${port}/x.git`],
    ['0177.0.0.1 (octal)', `http://0177.0.0.1:${port}/x.git`],
    ['0x7f000001 (hex)', `http://0x7f000001:${port}/x.git`],
    ['2130706433 (decimal)', `http://2130706433:${port}/x.git`],
    ['[::1]', `http://[::1]:${port}/x.git`],
    ['[::ffff:127.0.0.1] (IPv4-mapped)', `http://[::ffff:127.0.0.1]:${port}/x.git`],
    ['[::127.0.0.1] (IPv4-compatible)', `http://[::127.0.0.1]:${port}/x.git`],
    ['[64:ff9b::7f00:1] (NAT64 of 127.0.0.1)', `http://[64:ff9b::7f00:1]:${port}/x.git`],
    ['[64:ff9b::a9fe:a9fe] (NAT64 of 169.254.169.254)', `http://[64:ff9b::a9fe:a9fe]/latest/meta-data/`],
    ['[2002:7f00:1::1] (6to4 of 127.0.0.1)', `http://[2002:7f00:1::1]:${port}/x.git`],
    ['localhost', `http://localhost:${port}/x.git`],
    ['localhost. (trailing dot)', `http://localhost.:${port}/x.git`],
    ['LOCALHOST (upper case)', `http://LOCALHOST:${port}/x.git`],
    ['0.0.0.0', `http://0.0.0.0:${port}/x.git`],
    ['0 (zero)', `http://0:${port}/x.git`],
    ['169.254.169.254 (cloud metadata)', 'http://169.254.169.254/latest/meta-data/'],
    ['10.0.0.1 (10/8)', 'http://10.0.0.1/x.git'],
    ['10.255.255.254 (10/8)', 'http://10.255.255.254/x.git'],
    ['172.16.0.1 (172.16/12)', 'http://172.16.0.1/x.git'],
    ['172.31.255.254 (172.16/12)', 'http://172.31.255.254/x.git'],
    ['192.168.0.1 (192.168/16)', 'http://192.168.0.1/x.git'],
    ['192.168.255.254 (192.168/16)', 'https://192.168.255.254/x.git'],
    ['[fd00::1] (fd00::/8)', 'http://[fd00::1]/x.git'],
    ['[fdff:ffff::1] (fd00::/8)', 'http://[fdff:ffff::1]/x.git'],
    ['[fe80::1] (fe80::/10)', 'http://[fe80::1]/x.git'],
    ['[febf::1] (fe80::/10)', 'http://[febf::1]/x.git'],
    ['[::] (unspecified)', `http://[::]:${port}/x.git`],
    ['100.64.0.1 (100.64/10 shared)', 'http://100.64.0.1/x.git'],
    ['100.127.255.254 (100.64/10 shared)', 'http://100.127.255.254/x.git'],
    ['a DNS name resolving to loopback', `http://loopback.test:${port}/x.git`],
    ['a DNS name resolving to link-local', 'http://metadata.test/latest/meta-data/'],
    ['a DNS name resolving to a public and a loopback address', `http://mixed.test:${port}/x.git`],
    ['a DNS name resolving to ::1', `http://loopback6.test:${port}/x.git`],
    ['userinfo trick a@127.0.0.1@example.com', 'http://a@127.0.0.1@example.com/x.git'],
    ['userinfo trick a@example.com@127.0.0.1', `http://a@example.com@127.0.0.1:${port}/x.git`],
    ['userinfo trick with a fragment', `http://127.0.0.1:${port}#@example.com/x.git`],
    ['backslash trick', `http://127.0.0.1:${port}\\@example.com/x.git`],
  ];
  /** Schemes no outbound request may use, whatever the settings. */
  const badSchemes = (port: number): [string, string][] => [
    ['file:', 'file:///etc/passwd'],
    ['file: (host form)', 'file://localhost/etc/passwd'],
    ['ext::', 'ext::sh -c touch% /tmp/ssrf-pwned'],
    ['ext:: (spaced)', 'ext::sh -c "id > /tmp/ssrf-pwned"'],
    ['ssh:', `ssh://git@127.0.0.1:${port}/x.git`],
    ['ssh: (scp form)', 'git@127.0.0.1:x.git'],
    ['git:', `git://127.0.0.1:${port}/x.git`],
    ['ftp:', `ftp://127.0.0.1:${port}/x.git`],
    ['gopher:', `gopher://127.0.0.1:${port}/_x`],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/plain,x'],
    ['userinfo trick (always ambiguous)', 'http://a@127.0.0.1@example.com/x.git'],
  ];

  /** Tries `url` through every entry point; returns the statuses seen, keyed by entry point. */
  async function tryEverywhere(url: string): Promise<Record<string, number>> {
    const n = ++seq;
    const imp = await root(t.http.post(`${API}/projects`)).send({ name: `ssrf-import-${n}`, import_url: url });
    const hook = await root(t.http.post(`${API}/projects/${projectId}/hooks`)).send({ url, push_events: false, issues_events: true });
    const put = await root(t.http.put(`${API}/projects/${projectId}/hooks/${existingHookId}`)).send({ url });
    const sys = await root(t.http.post(`${API}/hooks`)).send({ url });
    for (const r of [imp, hook, put, sys]) expect(r.status).toBeLessThan(500);
    if (imp.status === 201) await waitForImport(imp.body.id);
    if (hook.status === 201) await root(t.http.delete(`${API}/projects/${projectId}/hooks/${hook.body.id}`)).expect(200);
    if (sys.status === 201) await root(t.http.delete(`${API}/hooks/${sys.body.id}`)).expect(200);
    return { import: imp.status, project_hook: hook.status, project_hook_update: put.status, system_hook: sys.status };
  }

  async function waitForImport(id: number): Promise<Json> {
    for (let i = 0; i < 300; i++) {
      const p = await root(t.http.get(`${API}/projects/${id}`)).expect(200);
      if (p.body.import_status === 'finished' || p.body.import_status === 'failed') return p.body;
      await sleep(100);
    }
    throw new Error('import did not finish');
  }

  async function hookLog(hookId: number, n: number, ms = 20_000): Promise<Json[]> {
    const end = Date.now() + ms;
    for (;;) {
      const log = (await root(t.http.get(`${API}/projects/${projectId}/hooks/${hookId}/events`)).expect(200)).body;
      if (log.length >= n || Date.now() > end) return log;
      await sleep(100);
    }
  }

  const openIssue = () =>
    root(t.http.post(`${API}/projects/${projectId}/issues`))
      .send({ title: `issue ${++seq}` })
      .expect(201);

  beforeAll(async () => {
    t = await startTestApp({ QUEUE_POLL_SECONDS: '0.5', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_LIMIT: '0' });
    outboundDns.lookup = async (host: string) => {
      const f = fakeDns.get(host.toLowerCase());
      if (!f) return realLookup(host);
      return f.answers[Math.min(f.calls++, f.answers.length - 1)];
    };
    fake('loopback.test', ['127.0.0.1']);
    fake('loopback6.test', ['::1']);
    fake('metadata.test', ['169.254.169.254']);
    fake('mixed.test', ['93.184.216.34', '127.0.0.1']);
    rx = await HookReceiver.start();
    home = mkdtempSync(join(tmpdir(), 'glv3-ssrf-'));
    git = await GitCli.listen(t, home);
    const up = await root(t.http.post(`${API}/projects`))
      .send({ name: 'upstream', visibility_level: 20 })
      .expect(201);
    projectId = up.body.id;
    const work = join(home, 'work');
    await git.ok(['init', '-q', work]);
    await git.commit(work, { 'README.md': '# upstream\n' }, 'first');
    await git.ok(['push', '-q', git.url(up.body.path_with_namespace, 'root', t.root.token), 'master'], work);
    await allowLocal(true);
    existingHookId = (
      await root(t.http.post(`${API}/projects/${projectId}/hooks`))
        .send({ url: rx.url('/existing') })
        .expect(201)
    ).body.id;
    await allowLocal(false);
  });
  afterAll(async () => {
    outboundDns.lookup = realLookup;
    await t.close();
    await rx.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('by default refuses every local form through import, project hooks (create, update) and system hooks, storing nothing', async () => {
    const forms = [...localForms(rx.port), ...badSchemes(rx.port)];
    const leaks: string[] = [];
    let attempts = 0;
    for (const [label, url] of forms) {
      const got = await tryEverywhere(url);
      attempts += 4;
      if (got.import !== 400) leaks.push(`${label}: import ${got.import}`);
      if (got.project_hook !== 422) leaks.push(`${label}: project hook ${got.project_hook}`);
      if (got.project_hook_update !== 422) leaks.push(`${label}: project hook update ${got.project_hook_update}`);
      if (got.system_hook !== 400) leaks.push(`${label}: system hook ${got.system_hook}`);
    }
    console.log(`SSRF default: ${forms.length} URL forms x 4 entry points = ${attempts} attempts, ${leaks.length} accepted`);
    expect(leaks).toEqual([]);
    expect(await t.sql(`SELECT id FROM projects WHERE path LIKE 'ssrf-import-%'`)).toHaveLength(0);
    expect(await t.sql(`SELECT id FROM web_hooks WHERE id <> $1`, [existingHookId])).toHaveLength(0);
    const [hook] = await t.sql<{ url: string }>(`SELECT url FROM web_hooks WHERE id = $1`, [existingHookId]);
    expect(hook.url).toBe(rx.url('/existing'));
    expect(rx.received).toHaveLength(0);
    expect(existsSync('/tmp/ssrf-pwned')).toBe(false);
  });

  it('an import refusal names the field in a GitLab error body', async () => {
    const res = await root(t.http.post(`${API}/projects`)).send({ name: 'refused', import_url: `http://127.1:${git.port}/root/upstream.git` });
    expect(res.status).toBe(400);
    expect(res.body.message.import_url[0]).toMatch(/local network/);
    const scheme = await root(t.http.post(`${API}/projects`))
      .send({ name: 'refused', import_url: 'ext::sh -c id' })
      .expect(400);
    expect(scheme.body.message.import_url[0]).toMatch(/http or https/);
  });

  it('at delivery time: a hook saved while allowed is not called once the setting is off', async () => {
    await allowLocal(true);
    const hook = (
      await root(t.http.post(`${API}/projects/${projectId}/hooks`))
        .send({ url: rx.url('/late'), issues_events: true })
        .expect(201)
    ).body;
    await allowLocal(false);
    await openIssue();
    const log = await hookLog(hook.id, 1);
    expect(log[0]).toMatchObject({ trigger: 'issue', response_status: null });
    expect(log[0].error).toMatch(/local network/);
    await sleep(300);
    expect(rx.at('/late')).toHaveLength(0);
    await root(t.http.delete(`${API}/projects/${projectId}/hooks/${hook.id}`)).expect(200);
  });

  it('DNS rebinding: a name that resolved public when saved and resolves to loopback at delivery is refused, never connected', async () => {
    fake('rebind.test', ['93.184.216.34'], ['127.0.0.1']);
    const url = `http://rebind.test:${rx.port}/rebind`;
    const hook = (
      await root(t.http.post(`${API}/projects/${projectId}/hooks`))
        .send({ url, issues_events: true })
        .expect(201)
    ).body;
    await openIssue();
    const log = await hookLog(hook.id, 1);
    expect(log[0].error).toMatch(/local network/);
    await sleep(300);
    expect(rx.at('/rebind')).toHaveLength(0);
    expect(fakeDns.get('rebind.test')!.calls).toBe(2);
    await root(t.http.delete(`${API}/projects/${projectId}/hooks/${hook.id}`)).expect(200);
  });

  it('the address vetted is the one connected to (hooks and imports): no second resolution', async () => {
    await allowLocal(true);
    try {
      // the system resolver does not know these names: only the vetted, pinned address can reach the target
      fake('pinned.test', ['127.0.0.1'], ['10.255.255.1']);
      const hook = (
        await root(t.http.post(`${API}/projects/${projectId}/hooks`))
          .send({ url: `http://pinned.test:${rx.port}/pinned`, issues_events: true })
          .expect(201)
      ).body;
      fake('pinned.test', ['127.0.0.1'], ['10.255.255.1']); // delivery: first lookup loopback (vetted), any later one elsewhere
      await openIssue();
      const [got] = await rx.waitFor('/pinned');
      expect(got.headers.host).toBe(`pinned.test:${rx.port}`);
      expect(fakeDns.get('pinned.test')!.calls).toBe(1);
      await root(t.http.delete(`${API}/projects/${projectId}/hooks/${hook.id}`)).expect(200);

      fake('pinned-import.test', ['127.0.0.1'], ['10.255.255.1']);
      const imp = await root(t.http.post(`${API}/projects`))
        .send({ name: 'pinned-import', import_url: `http://root:${t.root.token}@pinned-import.test:${git.port}/root/upstream.git` })
        .expect(201);
      expect(await waitForImport(imp.body.id)).toMatchObject({ import_status: 'finished', default_branch: 'master' });
      expect(fakeDns.get('pinned-import.test')!.calls).toBe(1);
    } finally {
      await allowLocal(false);
    }
  });

  it('redirects are never followed (a 302 to loopback is an answer, not a hop), for hooks and imports', async () => {
    await allowLocal(true);
    try {
      rx.on('/redirect', { statuses: [302], headers: { Location: rx.url('/redirect-target') } });
      const hook = (
        await root(t.http.post(`${API}/projects/${projectId}/hooks`))
          .send({ url: rx.url('/redirect'), issues_events: true })
          .expect(201)
      ).body;
      await openIssue();
      const log = await hookLog(hook.id, 1);
      expect(log[0]).toMatchObject({ response_status: 302 });
      await root(t.http.delete(`${API}/projects/${projectId}/hooks/${hook.id}`)).expect(200);

      rx.on('/moved.git/info/refs', { statuses: [302], headers: { Location: rx.url('/redirect-target/info/refs?service=git-upload-pack') } });
      const imp = await root(t.http.post(`${API}/projects`))
        .send({ name: 'redirected-import', import_url: rx.url('/moved.git') })
        .expect(201);
      expect(await waitForImport(imp.body.id)).toMatchObject({ import_status: 'failed' });
      expect(rx.received.filter((r) => r.path.startsWith('/moved.git')).length).toBeGreaterThan(0);
      await sleep(200);
      expect(rx.received.filter((r) => r.path.startsWith('/redirect-target'))).toHaveLength(0);
    } finally {
      await allowLocal(false);
    }
  });

  it('with the local-requests setting on, loopback is allowed; the bad schemes and ambiguous URLs never are', async () => {
    await allowLocal(true);
    try {
      const loopback = [
        `http://127.0.0.1:${git.port}/root/upstream.git`,
        `http://127.1:${git.port}/root/upstream.git`,
        `http://0x7f000001:${git.port}/root/upstream.git`,
        `http://localhost:${git.port}/root/upstream.git`,
        `http://loopback.test:${git.port}/root/upstream.git`,
      ];
      for (const url of loopback) {
        const got = await tryEverywhere(url);
        expect(got).toEqual({ import: 201, project_hook: 201, project_hook_update: 200, system_hook: 201 });
      }
      const refused: string[] = [];
      for (const [label, url] of badSchemes(rx.port)) {
        const got = await tryEverywhere(url);
        if (got.import !== 400 || got.project_hook !== 422 || got.project_hook_update !== 422 || got.system_hook !== 400) {
          refused.push(`${label}: ${JSON.stringify(got)}`);
        }
      }
      console.log(`SSRF local allowed: ${loopback.length} loopback URLs accepted, ${badSchemes(rx.port).length} bad schemes x 4 entry points refused`);
      expect(refused).toEqual([]);
      // an import from loopback really clones
      const imp = await root(t.http.post(`${API}/projects`))
        .send({ name: 'loopback-import', import_url: `http://root:${t.root.token}@127.1:${git.port}/root/upstream.git` })
        .expect(201);
      expect(await waitForImport(imp.body.id)).toMatchObject({ import_status: 'finished', default_branch: 'master' });
      await root(t.http.put(`${API}/projects/${projectId}/hooks/${existingHookId}`))
        .send({ url: rx.url('/existing') })
        .expect(200);
    } finally {
      await allowLocal(false);
    }
  });

  it('a refused address says why, through project hooks (422) and system hooks (400, the 8.17 validation error), for literals and names', async () => {
    const why = (how: string) =>
      `url is blocked: it ${how} (requests to the local network are not allowed); ` +
      'an administrator can allow local requests with the setting allow_local_requests_from_hooks_and_services';
    for (const [url, how] of [
      [`http://127.0.0.1:${rx.port}/x`, 'is a loopback address'],
      [`http://localhost.:${rx.port}/x`, 'resolves to a loopback address'],
      [`http://api.localhost:${rx.port}/x`, 'resolves to a loopback address'],
      [`http://loopback.test:${rx.port}/x`, 'resolves to a loopback address'],
      [`http://loopback6.test:${rx.port}/x`, 'resolves to a loopback address'],
      ['http://metadata.test/latest/meta-data/', 'resolves to a link-local address'],
      [`http://mixed.test:${rx.port}/x`, 'resolves to a loopback address'],
      ['http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'is a link-local address'],
      ['http://172.16.0.1/x', 'is a private address'],
    ]) {
      const received = rx.received.length;
      const hook = await root(t.http.post(`${API}/projects/${projectId}/hooks`)).send({ url });
      expect([url, hook.status, hook.body]).toEqual([url, 422, { message: `422 Invalid url given: ${why(how)}` }]);
      const sys = await root(t.http.post(`${API}/hooks`)).send({ url });
      expect([url, sys.status, sys.body]).toEqual([url, 400, { message: { url: [why(how).replace(/^url /, '')] } }]);
      expect(rx.received).toHaveLength(received);
    }
  });

  it('a name that does not resolve is accepted for hooks (decision 34) but not for imports (cloned now); a delivery to it connects nowhere', async () => {
    const url = 'http://ssrf-target.invalid/x';
    const received = rx.received.length;
    const got = await tryEverywhere(url);
    expect(got).toEqual({ import: 400, project_hook: 201, project_hook_update: 200, system_hook: 201 });
    const imp = await root(t.http.post(`${API}/projects`))
      .send({ name: 'unresolved-import', import_url: url })
      .expect(400);
    expect(imp.body).toEqual({ message: { import_url: ['host could not be resolved'] } });
    // the existing hook now points at the name: a delivery is attempted, fails at the lookup and is logged
    await root(t.http.put(`${API}/projects/${projectId}/hooks/${existingHookId}`))
      .send({ url, issues_events: true })
      .expect(200);
    const before = (await hookLog(existingHookId, 0)).length;
    await openIssue();
    const log = await hookLog(existingHookId, before + 1);
    expect(log[0]).toMatchObject({ trigger: 'issue', response_status: null, error: 'URL host could not be resolved' });
    expect(rx.received).toHaveLength(received);
    await allowLocal(true);
    try {
      await root(t.http.put(`${API}/projects/${projectId}/hooks/${existingHookId}`))
        .send({ url: rx.url('/existing'), issues_events: false })
        .expect(200);
    } finally {
      await allowLocal(false);
    }
  });

  it("git's own protocol.allow refuses file: and ext:: for imports even past the guard", async () => {
    const gitService = t.app.app.get(GitService);
    const upstreamDir = gitService.repositoryPath(projectId);
    const p = (
      await root(t.http.post(`${API}/projects`))
        .send({ name: 'protocol-allow' })
        .expect(201)
    ).body;
    for (const raw of [`file://${upstreamDir}`, 'ext::sh -c touch% /tmp/ssrf-pwned', `ssh://127.0.0.1:${rx.port}/x.git`]) {
      const url = new URL(raw);
      await expect(gitService.importFrom(p.id, { url, host: '127.0.0.1', port: 1, address: '127.0.0.1' })).rejects.toThrow(/not allowed|transport/i);
    }
    expect(existsSync('/tmp/ssrf-pwned')).toBe(false);
  });
});
