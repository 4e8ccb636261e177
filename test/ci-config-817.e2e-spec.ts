import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CiConfigPushCheck } from '../src/ci/pipelines/push-ci-check';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { ci, Json, waitFor } from './helpers/ci';
import { GitCli } from './helpers/git-cli';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';

/** A `.gitlab-ci.yml` as a team on GitLab 8.17 has it: environments, a manual action, coverage, dependencies, Pages. */
const TYPICAL = `
image: ruby:2.3
stages: [build, test, deploy]
variables:
  RAILS_ENV: test
cache:
  key: bundle
  paths: [vendor/bundle]
before_script: [bundle install --path vendor/bundle]
compile:
  stage: build
  script: rake assets:precompile
  artifacts:
    name: assets
    paths: [public/assets]
    expire_in: 1 week
rspec:
  script: rspec
  coverage: /\\(\\d+\\.\\d+%\\) covered/
  dependencies: [compile]
review:
  stage: deploy
  script: deploy review
  environment:
    name: review/$CI_BUILD_REF_NAME
    url: https://$CI_BUILD_REF_SLUG.review.example.com
    on_stop: stop_review
  only: [branches]
  except: [master]
stop_review:
  stage: deploy
  script: teardown review
  when: manual
  environment:
    name: review/$CI_BUILD_REF_NAME
    action: stop
production:
  stage: deploy
  script: deploy production
  environment: production
  when: manual
  only: [master]
pages:
  stage: deploy
  script: [mkdir -p public, cp -r doc/* public]
  artifacts:
    paths: [public]
  only: [master]
`;

/** The file of issue 38: three errors, which GitLab 8.17 told one pipeline at a time. */
const THREE_ERRORS = 'rspec:\n  script: rspec\n  coverage: 1\n  environment: {name: "production:eu"}\n  when: sometimes\n';
const THREE_ERROR_LINES = [
  'remote: .gitlab-ci.yml (branch master) is invalid:',
  'remote:   - jobs:rspec when should be on_success, on_failure, always or manual',
  "remote:   - jobs:rspec:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
  'remote:   - jobs:rspec:coverage config must be a regular expression',
];

/** The `remote:` lines of a push's output that are about `.gitlab-ci.yml`, trailing blanks trimmed. */
const ciLines = (stderr: string) => {
  const lines = stderr.split('\n').map((l) => l.trimEnd());
  const start = lines.findIndex((l) => /^remote: \.gitlab-ci\.yml \(/.test(l));
  if (start === -1) return [];
  const out: string[] = [];
  for (const l of lines.slice(start)) {
    if (!l.startsWith('remote:') || l === 'remote:') break;
    out.push(l);
  }
  return out;
};

/**
 * GitLab 8.17's `.gitlab-ci.yml` over HTTP: a push of a file as teams had it then makes its builds;
 * an invalid file fails its pipeline with 8.17's first error (the same text `POST /ci/lint` answers),
 * and the push itself lists every error of the file on `remote:` lines, over smart HTTP and SSH.
 */
describe('.gitlab-ci.yml of GitLab 8.17 (issue 38 items 1 and 7)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let home: string;
  let git: GitCli;
  let ssh: SshCli;
  let key: { file: string; pub: string };
  const lint = (content: string) => t.http.post(`${API}/ci/lint`).set('PRIVATE-TOKEN', owner.token).send({ content });

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    c = ci(t);
    owner = await t.createUser();
    home = mkdtempSync(join(tmpdir(), 'ci-817-'));
    git = await GitCli.listen(t, home);
    ssh = SshCli.of(t.app.app.get(SshServerService), home);
    key = await ssh.keygen('owner');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', owner.token).send({ title: 'laptop', key: key.pub }).expect(201);
  });
  afterAll(async () => {
    await t?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** A new project with a first commit (no `.gitlab-ci.yml`), cloned over HTTP into a work tree. */
  async function cloned(): Promise<{ id: number; path: string; work: string }> {
    const p = await c.project(owner, null);
    const work = join(home, `w-${p.id}`);
    await git.ok(['clone', '-q', git.url(p.path, owner.username, owner.password), work]);
    return { id: p.id, path: p.path, work };
  }

  describe('a typical 8.17 file', () => {
    it('is valid for the lint, and its push on master makes the builds master runs, in their stages', async () => {
      expect((await lint(TYPICAL).expect(200)).body).toEqual({ status: 'valid', errors: [] });
      const p = await cloned();
      writeFileSync(join(p.work, '.gitlab-ci.yml'), TYPICAL);
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci of 8.17'], p.work);
      const push = await git.run(['push', 'origin', 'master'], p.work);
      expect(push.code).toBe(0);
      expect(ciLines(push.stderr)).toEqual([]); // a valid file says nothing
      const pipeline = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline');
      expect(pipeline.yaml_errors).toBeNull();
      const builds = await waitFor(async () => {
        const list = await c.builds(p.id);
        return list.length >= 5 ? list : undefined;
      }, 'builds');
      // master: no review (except: [master]) and so no stop_review either; production and pages only on master
      expect(builds.map((b: Json) => [b.name, b.stage]).sort()).toEqual(
        [
          ['compile', 'build'],
          ['pages', 'deploy'],
          ['production', 'deploy'],
          ['rspec', 'test'],
          ['stop_review', 'deploy'],
        ].sort(),
      );
    });

    it('on a feature branch: the review environment and its stop action, not production nor pages', async () => {
      const p = await cloned();
      await git.ok(['checkout', '-q', '-b', 'feature'], p.work);
      writeFileSync(join(p.work, '.gitlab-ci.yml'), TYPICAL);
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci of 8.17'], p.work);
      await git.ok(['push', '-q', 'origin', 'feature'], p.work);
      const builds = await waitFor(async () => {
        const list = await c.builds(p.id);
        return list.length >= 4 ? list : undefined;
      }, 'builds');
      expect(builds.map((b: Json) => b.name).sort()).toEqual(['compile', 'review', 'rspec', 'stop_review']);
    });
  });

  describe('POST /ci/lint: 8.17 first error for every malformed keyword, never a 500', () => {
    const job = (extra: string) => `rspec:\n  script: rspec\n${extra}`;
    const cases: [string, string][] = [
      [job('  environment: 1\n'), 'jobs:rspec:environment config should be a hash or a string'],
      [job('  environment:\n    url: http://x\n'), "jobs:rspec:environment name can't be blank"],
      [job('  environment:\n    name: a\n    action: restart\n'), 'jobs:rspec:environment action should be start or stop'],
      [job('  environment:\n    name: a\n    on_stop: [x]\n'), 'jobs:rspec:environment on stop should be a string'],
      [job('  environment:\n    name: a\n    on_stop: nope\n'), 'rspec job: on_stop job nope is not defined'],
      [job('  environment:\n    name: a\n    foo: 1\n'), 'jobs:rspec:environment config contains unknown keys: foo'],
      [job('  when: later\n'), 'jobs:rspec when should be on_success, on_failure, always or manual'],
      [job('  coverage: 12\n'), 'jobs:rspec:coverage config must be a regular expression'],
      [job('  coverage: "/(/"\n'), 'jobs:rspec:coverage config must be a regular expression'],
      [job('  image: [a]\n'), 'jobs:rspec:image config should be a string'],
      [job('  services: a\n'), 'jobs:rspec:services config should be an array of strings'],
      [job('  before_script: a\n'), 'jobs:rspec:before_script config should be an array of strings'],
      [job('  after_script: [[a]]\n'), 'jobs:rspec:after_script config should be an array of strings'],
      [job('  variables: [a]\n'), 'jobs:rspec:variables config should be a hash of key value pairs'],
      [job('  cache: {key: [a]}\n'), 'jobs:rspec:cache:key config should be a string or symbol'],
      [job('  cache: {untracked: 1}\n'), 'jobs:rspec:cache:untracked config should be a boolean value'],
      [job('  cache: {paths: a}\n'), 'jobs:rspec:cache:paths config should be an array of strings'],
      [job('  artifacts: {paths: a}\n'), 'jobs:rspec:artifacts paths should be an array of strings'],
      [job('  artifacts: {when: manual}\n'), 'jobs:rspec:artifacts when should be on_success, on_failure or always'],
      [job('  artifacts: {expire_in: forever}\n'), 'jobs:rspec:artifacts expire in should be a duration'],
      [job('  artifacts: {name: [a]}\n'), 'jobs:rspec:artifacts name should be a string'],
      [job('  artifacts: {untracked: yes please}\n'), 'jobs:rspec:artifacts untracked should be a boolean value'],
      [job('  dependencies: a\n'), 'jobs:rspec dependencies should be an array of strings'],
      [job('  dependencies: [nope]\n'), 'rspec job: undefined dependency: nope'],
      [job('  only: [1]\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
      [job('  except: ["/+/"]\n'), 'jobs:rspec:except config should be an array of strings or regexps'],
      [job('  tags: ruby\n'), 'jobs:rspec tags should be an array of strings'],
      [job('  allow_failure: maybe\n'), 'jobs:rspec allow failure should be a boolean value'],
      [job('  stage: [a]\n'), 'jobs:rspec:stage config should be a string'],
      [job('  stage: nowhere\n'), 'rspec job: stage parameter should be build, test, deploy'],
      [job('  foo: 1\n'), 'jobs:rspec config contains unknown keys: foo'],
      ['stages: [build]\n' + job(''), 'rspec job: stage parameter should be build'],
      ['rspec: x\n', 'jobs:rspec config should be a hash'],
      ['10:\n  script: x\n', 'jobs:10 name should be a symbol'],
      ['.hidden: ~\n' + job(''), "jobs:.hidden config can't be blank"],
      ['image: 1\n' + job(''), 'image config should be a string'],
      ['variables: false\n' + job(''), 'variables config should be a hash of key value pairs'],
      ['cache: {foo: 1}\n' + job(''), 'cache config contains unknown keys: foo'],
      ['types: build\n' + job(''), 'types config should be an array of strings'],
      ['before_script: [1]\n.x: {script: y}\n', 'before_script config should be an array of strings'],
      ['.x: {script: y}\n', 'jobs config should contain at least one visible job'],
      ['[a, b]\n', 'Invalid configuration format'],
      // 8.17's own lint spec (spec/requests/api/lint_spec.rb)
      ['invalid content', 'Invalid configuration format'],
      ['{ image: "ruby:2.1",  services: ["postgres"] }', 'jobs config should contain at least one visible job'],
    ];
    it.each(cases)('%j', async (content, error) => {
      const res = await lint(content).expect(200);
      expect(res.body).toEqual({ status: 'invalid', errors: [error] });
    });
  });

  describe('a push of an invalid file', () => {
    it('over HTTP: every error on remote: lines; the push succeeds; the pipeline fails with the first, as the lint', async () => {
      const p = await cloned();
      writeFileSync(join(p.work, '.gitlab-ci.yml'), THREE_ERRORS);
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci'], p.work);
      const push = await git.run(['push', 'origin', 'master'], p.work);
      expect(push.code).toBe(0);
      expect(push.stderr).toContain('master -> master');
      expect(ciLines(push.stderr)).toEqual(THREE_ERROR_LINES);
      const first = 'jobs:rspec when should be on_success, on_failure, always or manual';
      const pipeline = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline');
      expect(pipeline).toMatchObject({ status: 'failed', yaml_errors: first });
      expect((await lint(THREE_ERRORS).expect(200)).body).toEqual({ status: 'invalid', errors: [first] });
    });

    it('over SSH: the same remote: lines', async () => {
      const p = await cloned();
      writeFileSync(join(p.work, '.gitlab-ci.yml'), THREE_ERRORS);
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci'], p.work);
      const push = await ssh.git(key.file, ['push', ssh.url(p.path), 'master'], p.work);
      expect(push.code).toBe(0);
      expect(push.stderr).toContain('master -> master');
      expect(ciLines(push.stderr)).toEqual(THREE_ERROR_LINES);
      const pipeline = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline');
      expect(pipeline).toMatchObject({ status: 'failed', yaml_errors: 'jobs:rspec when should be on_success, on_failure, always or manual' });
    });

    it('the same file on several refs is listed once, naming them; a valid file and a deleted branch say nothing', async () => {
      const p = await cloned();
      writeFileSync(join(p.work, '.gitlab-ci.yml'), 'rspec:\n  script: x\n  tags: ruby\n');
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci'], p.work);
      await git.ok(['branch', 'other'], p.work);
      await git.ok(['tag', 'v1'], p.work);
      const push = await git.run(['push', 'origin', 'master', 'other', 'v1'], p.work);
      expect(push.code).toBe(0);
      expect(ciLines(push.stderr)).toEqual([
        'remote: .gitlab-ci.yml (branch master, branch other, tag v1) is invalid:',
        'remote:   - jobs:rspec tags should be an array of strings',
      ]);
      const deleted = await git.run(['push', 'origin', ':other'], p.work);
      expect(deleted.code).toBe(0);
      expect(ciLines(deleted.stderr)).toEqual([]);
      writeFileSync(join(p.work, '.gitlab-ci.yml'), 'rspec:\n  script: x\n  tags: [ruby]\n');
      await git.ok(['commit', '-qam', 'fixed'], p.work);
      const fixed = await git.run(['push', 'origin', 'master'], p.work);
      expect(fixed.code).toBe(0);
      expect(fixed.stderr).not.toContain('.gitlab-ci.yml');
    });

    it('lists at most 10 distinct files and 5 refs of each (a push of many branches stays readable)', async () => {
      const p = await cloned();
      const branches: string[] = [];
      for (let i = 0; i < 12; i++) {
        await git.ok(['checkout', '-q', '-B', `b${i}`, 'master'], p.work);
        writeFileSync(join(p.work, '.gitlab-ci.yml'), `job${i}:\n  script: x\n  tags: t\n`);
        await git.ok(['add', '.'], p.work);
        await git.ok(['commit', '-qm', `ci ${i}`], p.work);
        branches.push(`b${i}`);
      }
      for (let i = 0; i < 7; i++) await git.ok(['tag', `v${i}`, 'b0'], p.work);
      // ten files checked one after another: time enough on a busy machine (the listing is what is tested here)
      const check = t.app.app.get(CiConfigPushCheck);
      check.timeoutMs = 20_000;
      const push = await git
        .run(['push', 'origin', ...branches, ...Array.from({ length: 7 }, (_, i) => `v${i}`)], p.work)
        .finally(() => (check.timeoutMs = 2000));
      expect(push.code).toBe(0);
      const headers = push.stderr.split('\n').filter((l) => /^remote: \.gitlab-ci\.yml \(/.test(l));
      expect(headers).toHaveLength(10);
      expect(push.stderr).toMatch(/remote: \.gitlab-ci\.yml \(branch b0, tag v0, tag v1, tag v2, tag v3 and 3 more\) is invalid:/);
      expect(push.stderr).toContain('remote: (2 more distinct .gitlab-ci.yml files of this push are not checked here: their pipelines say)');
    });

    it('a check that takes longer than its time says nothing and never fails the push (the pipeline still says why)', async () => {
      const check = t.app.app.get(CiConfigPushCheck);
      const p = await cloned();
      writeFileSync(join(p.work, '.gitlab-ci.yml'), THREE_ERRORS);
      await git.ok(['add', '.'], p.work);
      await git.ok(['commit', '-qm', 'ci'], p.work);
      check.timeoutMs = 0;
      try {
        const push = await git.run(['push', 'origin', 'master'], p.work);
        expect(push.code).toBe(0);
        expect(push.stderr).toContain('master -> master');
        expect(ciLines(push.stderr)).toEqual([]);
      } finally {
        check.timeoutMs = 2000;
      }
      const pipeline = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline');
      expect(pipeline).toMatchObject({ status: 'failed', yaml_errors: 'jobs:rspec when should be on_success, on_failure, always or manual' });
    });
  });
});
