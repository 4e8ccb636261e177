import { CiConfig, CiConfigError, MAX_JOBS, MAX_STAGES, parseDuration, processCiConfig } from './ci-config';

const job = (extra = '') => `rspec:\n  script: rake spec\n${extra}`;

describe('CiConfig: GitLab error texts (8.8, and 8.11+ for a job without script)', () => {
  const cases: [string, string, string][] = [
    ['empty file', '', 'Please provide content of .gitlab-ci.yml'],
    ['not a hash', '- a\n- b\n', 'YAML should be a hash'],
    ['a scalar', 'hello', 'YAML should be a hash'],
    ['no job', 'before_script: ["a"]\n', 'Please define at least one job'],
    ['only hidden jobs', '.hidden:\n  script: x\n', 'Please define at least one job'],
    ['job without script', 'rspec:\n  stage: test\n', "jobs:rspec script can't be blank"],
    ['job with other keys but no script', 'job1:\n  tags: [a]\n  only: [master]\n', "jobs:job1 script can't be blank"],
    ['job that is not a hash', 'rspec: "echo"\n', 'Unknown parameter: rspec'],
    ['empty job hash', 'rspec: {}\n', "jobs:rspec script can't be blank"],
    ['unknown top-level key (a typo of a global key)', 'before_scrip: ["a"]\n' + job(), 'Unknown parameter: before_scrip'],
    ['global before_script not array', 'before_script: "x"\n' + job(), 'before_script should be an array of strings'],
    ['global after_script not array', 'after_script: "x"\n' + job(), 'after_script should be an array of strings'],
    ['global image not string', 'image: ["a"]\n' + job(), 'image should be a string'],
    ['global services not array', 'services: "pg"\n' + job(), 'services should be an array of strings'],
    ['stages not array', 'stages: "build"\n' + job(), 'stages should be an array of strings'],
    ['types not array', 'types: 1\n' + job(), 'stages should be an array of strings'],
    ['global variables not strings', 'variables:\n  A: 1\n' + job(), 'variables should be a map of key-value strings'],
    ['global variables not a map', 'variables: ["a"]\n' + job(), 'variables should be a map of key-value strings'],
    ['global cache unknown key', 'cache:\n  foo: 1\n' + job(), 'cache unknown parameter foo'],
    ['global cache key', 'cache:\n  key: 1\n' + job(), 'cache:key parameter should be a string'],
    ['global cache untracked', 'cache:\n  untracked: "yes"\n' + job(), 'cache:untracked parameter should be an boolean'],
    ['global cache paths', 'cache:\n  paths: "a"\n' + job(), 'cache:paths parameter should be an array of strings'],
    ['unknown job key', job('  foo: bar\n'), 'rspec job: unknown parameter foo'],
    ['script wrong type', 'rspec:\n  script: 1\n', 'rspec job: script should be a string or an array of a strings'],
    ['script array of non-strings', 'rspec:\n  script: [1]\n', 'rspec job: script should be a string or an array of a strings'],
    ['job before_script', job('  before_script: "x"\n'), 'rspec job: before_script should be an array of strings'],
    ['job after_script', job('  after_script: "x"\n'), 'rspec job: after_script should be an array of strings'],
    ['job image', job('  image: [1]\n'), 'rspec job: image should be a string'],
    ['job services', job('  services: "x"\n'), 'rspec job: services should be an array of strings'],
    ['tags', job('  tags: "ruby"\n'), 'rspec job: tags parameter should be an array of strings'],
    ['only', job('  only: "master"\n'), 'rspec job: only parameter should be an array of strings'],
    ['except', job('  except: "master"\n'), 'rspec job: except parameter should be an array of strings'],
    ['allow_failure', job('  allow_failure: "yes"\n'), 'rspec job: allow_failure parameter should be an boolean'],
    ['when', job('  when: sometimes\n'), 'rspec job: when parameter should be on_success, on_failure or always'],
    ['stage not in list', job('  stage: nope\n'), 'rspec job: stage parameter should be build, test, deploy'],
    ['type not in custom list', 'stages: [a, b]\n' + job('  type: c\n'), 'rspec job: stage parameter should be a, b'],
    ['default stage not in custom list', 'stages: [a]\n' + job('  stage: test\n'), 'rspec job: stage parameter should be a'],
    // GitLab 8.17: a job without stage/type is on `test`, which must be in `stages` (not silently dropped)
    // GitLab 8.17: a job name must be a string (symbol); an integer key is refused
    ['integer job name', '10:\n  script: test\n', 'jobs:10 name should be a symbol'],
    ['float job name', '1.5:\n  script: test\n', 'jobs:1.5 name should be a symbol'],
    ['boolean job name', 'true:\n  script: test\n', 'jobs:true name should be a symbol'],
    ['integer job name beside a valid job', job() + '10:\n  script: test\n', 'jobs:10 name should be a symbol'],
    ['implicit default stage test not in custom list', 'stages: [build, deploy]\n' + job(), 'rspec job: stage parameter should be build, deploy'],
    ['implicit default stage test not in custom types', 'types: [build]\n' + job(), 'rspec job: stage parameter should be build'],
    ['null stage is the default test', 'stages: [build, deploy]\n' + job('  stage: ~\n'), 'rspec job: stage parameter should be build, deploy'],
    ['job variables', job('  variables:\n    A: [1]\n'), 'rspec job: variables should be a map of key-value strings'],
    ['job cache unknown', job('  cache:\n    foo: 1\n'), 'rspec job: cache unknown parameter foo'],
    ['job cache key', job('  cache:\n    key: 1\n'), 'rspec job: cache:key parameter should be a string'],
    ['job cache untracked', job('  cache:\n    untracked: 1\n'), 'rspec job: cache:untracked parameter should be an boolean'],
    ['job cache paths', job('  cache:\n    paths: 1\n'), 'rspec job: cache:paths parameter should be an array of strings'],
    ['artifacts unknown', job('  artifacts:\n    foo: 1\n'), 'rspec job: artifacts unknown parameter foo'],
    ['artifacts name', job('  artifacts:\n    name: 1\n'), 'rspec job: artifacts:name parameter should be a string'],
    ['artifacts untracked', job('  artifacts:\n    untracked: 1\n'), 'rspec job: artifacts:untracked parameter should be an boolean'],
    ['artifacts paths', job('  artifacts:\n    paths: a\n'), 'rspec job: artifacts:paths parameter should be an array of strings'],
    ['artifacts when', job('  artifacts:\n    when: never\n'), 'rspec job: artifacts:when parameter should be on_success, on_failure or always'],
    ['artifacts expire_in', job('  artifacts:\n    expire_in: soon\n'), 'rspec job: artifacts:expire_in parameter should be a duration'],
    ['dependencies type', job('  dependencies: "a"\n'), 'rspec job: dependencies parameter should be an array of strings'],
    ['undefined dependency', job('  dependencies: ["nope"]\n'), 'rspec job: undefined dependency: nope'],
    // GitLab 8.17 reads Ruby symbols (`:build1`) and looks a dependency up by `to_sym`; a quoted ":x" is a string
    ['undefined symbol dependency', job('  dependencies: [:nope]\n'), 'rspec job: undefined dependency: nope'],
    [
      'quoted ":x" is a string, not a symbol',
      'build1:\n  stage: build\n  script: x\n' + job('  dependencies: [":build1"]\n'),
      'rspec job: undefined dependency: :build1',
    ],
    [
      'symbol dependency in the same stage',
      'lint:\n  script: x\n' + job('  dependencies: [:lint]\n'),
      'rspec job: dependency lint is not defined in prior stages',
    ],
    ['dependency in same stage', 'lint:\n  script: x\n' + job('  dependencies: ["lint"]\n'), 'rspec job: dependency lint is not defined in prior stages'],
    ['invalid regexp', job('  only: ["/(/"]\n'), 'rspec job: only parameter contains an invalid regexp /(/'],
    ['overlong regexp', job(`  except: ["/${'a'.repeat(300)}/"]\n`), 'rspec job: except parameter regexp is longer than 256 characters'],
    ['syntax error', 'rspec:\n  script: [a\n', '(<unknown>): '],
    ['duplicate-free tab error', 'rspec:\n\t script: x\n', '(<unknown>): '],
    [
      'billion laughs',
      'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n' +
        'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n' +
        'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nrspec:\n  script: [*g]\n',
      '(<unknown>): the document expands to more than 4 MB once its aliases are resolved (possible billion laughs attack)',
    ],
    ['deep nesting', 'rspec:\n  script: x\n  variables: ' + '['.repeat(200) + ']'.repeat(200) + '\n', '(<unknown>): '],
    ['too large', 'rspec:\n  script: x\n#' + 'x'.repeat(1024 * 1024) + '\n', 'The .gitlab-ci.yml is larger than 1 MB'],
  ];

  it.each(cases)('%s', (_name, content, message) => {
    let error: unknown;
    try {
      new CiConfig(content);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CiConfigError);
    if (message.endsWith(': ')) expect((error as Error).message.startsWith(message)).toBe(true);
    else expect((error as Error).message).toBe(message);
  });

  it('validationMessage returns null for a valid file', () => {
    expect(CiConfig.validationMessage(job())).toBeNull();
    expect(CiConfig.validationMessage('x: 1')).toBe('Unknown parameter: x');
  });

  it('dependencies named by Ruby symbols (:build1, :"build 2") are the jobs build1 and build 2, as GitLab 8.17', () => {
    const yml = 'build1:\n  stage: build\n  script: x\n"build 2":\n  stage: build\n  script: x\ntest1:\n  script: y\n  dependencies: [:build1, :"build 2"]\n';
    expect(CiConfig.validationMessage(yml)).toBeNull();
    const test1 = new CiConfig(yml).buildsForRef('master').find((b) => b.name === 'test1');
    expect(test1?.options.dependencies).toEqual(['build1', 'build 2']);
  });

  it('a symbol elsewhere stays the text it was written as (only dependencies name jobs by symbol), also through an alias', () => {
    const yml = 'build1:\n  stage: build\n  script: [:x]\n  tags: &t [:build1]\ntest1:\n  script: y\n  tags: *t\n  dependencies: *t\n';
    const builds = new CiConfig(yml).buildsForRef('master');
    expect(builds.map((b) => [b.name, b.commands, b.tagList, b.options.dependencies])).toEqual([
      ['build1', ':x', [':build1'], undefined],
      ['test1', 'y', [':build1'], ['build1']],
    ]);
    // a symbol key is its text, as before (no object key stringified)
    expect(new CiConfig(':a:\n  script: x\n  variables:\n    :B: :c\n').buildsForRef('master')).toMatchObject([
      { name: ':a', yamlVariables: [{ key: ':B', value: ':c', public: true }] },
    ]);
  });

  it('a quoted number is a job name (a string, as in GitLab 8.17); only the unquoted number is refused', () => {
    expect(CiConfig.validationMessage('"10":\n  script: test\n')).toBeNull();
    expect(new CiConfig("'10':\n  script: test\n").jobNames()).toEqual(['10']);
  });
});

describe('CiConfig: build attributes', () => {
  const yml = `
stages: [build, test, deploy]
image: ruby:2.1
services: [postgres]
before_script: ["bundle install"]
after_script: ["cleanup"]
variables:
  DB_NAME: postgres
cache:
  key: k
  paths: [vendor/]
.defaults: &defaults
  tags: [ruby]
  allow_failure: true
rspec:
  <<: *defaults
  script: "rake spec"
  variables:
    JOB_VAR: one
spinach:
  stage: test
  script: ["rake spinach", "echo done"]
  tags: [ruby, mysql]
  before_script: ["own before"]
  after_script: ["own after"]
  image: ruby:2.2
  services: [mysql]
  cache:
    paths: [x/]
  artifacts:
    name: art
    paths: [out/]
    untracked: true
    expire_in: 1 week
compile:
  type: build
  script: make
  when: always
deploy:
  stage: deploy
  script: cap deploy
  dependencies: [compile]
  when: on_failure
`;

  it('maps every keyword as GitLab 8.8 does', () => {
    const c = new CiConfig(yml);
    expect(c.stages).toEqual(['build', 'test', 'deploy']);
    const builds = c.buildsForRef('master');
    const by = Object.fromEntries(builds.map((b) => [b.name, b]));
    expect(Object.keys(by)).toEqual(['rspec', 'spinach', 'compile', 'deploy']);
    expect(by.rspec).toEqual({
      name: 'rspec',
      stage: 'test',
      stageIdx: 1,
      commands: 'bundle install\nrake spec',
      tagList: ['ruby'],
      allowFailure: true,
      when: 'on_success',
      yamlVariables: [
        { key: 'DB_NAME', value: 'postgres', public: true },
        { key: 'JOB_VAR', value: 'one', public: true },
      ],
      options: {
        image: 'ruby:2.1',
        services: ['postgres'],
        cache: { key: 'k', paths: ['vendor/'] },
        after_script: ['cleanup'],
      },
    });
    expect(by.spinach.commands).toBe('own before\nrake spinach\necho done');
    expect(by.spinach.options).toEqual({
      image: 'ruby:2.2',
      services: ['mysql'],
      artifacts: { name: 'art', paths: ['out/'], untracked: true, expire_in: '1 week' },
      cache: { paths: ['x/'] },
      after_script: ['own after'],
    });
    expect(by.spinach.allowFailure).toBe(false);
    expect(by.compile).toMatchObject({ stage: 'build', stageIdx: 0, when: 'always' });
    expect(by.deploy).toMatchObject({ stage: 'deploy', stageIdx: 2, when: 'on_failure', options: expect.objectContaining({ dependencies: ['compile'] }) });
    expect(c.buildsForStageAndRef('build', 'master').map((b) => b.name)).toEqual(['compile']);
  });

  it('types is an alias of stages and the default stage is test', () => {
    const c = new CiConfig('types: [one, test]\na:\n  script: x\n');
    expect(c.stages).toEqual(['one', 'test']);
    expect(c.buildsForRef('m')[0]).toMatchObject({ stage: 'test', stageIdx: 1 });
  });

  it('defaults: no tags, on_success, no options', () => {
    const b = new CiConfig('a:\n  script: x\n').buildsForRef('m')[0];
    expect(b).toMatchObject({ commands: 'x', tagList: [], allowFailure: false, when: 'on_success', options: {}, yamlVariables: [] });
  });
});

describe('CiConfig: only / except', () => {
  const at = (only: string | null, except: string | null) =>
    new CiConfig(`a:\n  script: x\n` + (only ? `  only: ${only}\n` : '') + (except ? `  except: ${except}\n` : ''), 'group/project');
  const cases: [string | null, string | null, string, boolean, boolean, boolean][] = [
    // only, except, ref, tag, trigger, runs?
    [null, null, 'master', false, false, true],
    ['[branches]', null, 'master', false, false, true],
    ['[branches]', null, 'v1', true, false, false],
    ['[tags]', null, 'v1', true, false, true],
    ['[tags]', null, 'master', false, false, false],
    ['[triggers]', null, 'master', false, true, true],
    ['[triggers]', null, 'master', false, false, false],
    ['[master]', null, 'master', false, false, true],
    ['[master]', null, 'feature', false, false, false],
    ['["/^feature-/"]', null, 'feature-x', false, false, true],
    ['["/^feature-/"]', null, 'x-feature-', false, false, false],
    ['["master@group/project"]', null, 'master', false, false, true],
    ['["master@other/project"]', null, 'master', false, false, false],
    ['["branches@group/project"]', null, 'dev', false, false, true],
    [null, '[master]', 'master', false, false, false],
    [null, '[master]', 'dev', false, false, true],
    [null, '[tags]', 'v1', true, false, false],
    [null, '["/^v\\\\d/"]', 'v1', true, false, false],
    [null, '["/^v\\\\d/"]', 'release', false, false, true],
    ['[branches]', '[master]', 'master', false, false, false],
    ['[branches]', '[master]', 'dev', false, false, true],
    ['[]', null, 'dev', false, false, true],
  ];
  it.each(cases)('only %s except %s on %s (tag %s, trigger %s) → %s', (only, except, ref, tag, trigger, runs) => {
    expect(at(only, except).buildsForRef(ref, tag, trigger).length).toBe(runs ? 1 : 0);
  });

  it('a catastrophically backtracking regexp is stopped, not hung', () => {
    const c = new CiConfig('a:\n  script: x\n  only: ["/^(a+)+$/"]\n');
    const started = Date.now();
    expect(() => c.buildsForRef('a'.repeat(40) + '!')).toThrow(CiConfigError);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('CiConfig: limits (issue 36: one file must never stall the server)', () => {
  const error = (content: string) => {
    const r = processCiConfig({ content, ref: { name: 'master', tag: false, trigger: false } });
    return r.ok ? null : r.error;
  };
  const jobs = (n: number, stage = (i: number) => `s${i % 10}`) => Array.from({ length: n }, (_, i) => `j${i}:\n  stage: ${stage(i)}\n  script: x\n`).join('');
  const stages = (n: number) => `stages: [${Array.from({ length: n }, (_, i) => `s${i}`).join(', ')}]\n`;

  it('refuses more stages or jobs than the limits, and accepts the limits', () => {
    expect(error(stages(MAX_STAGES + 1) + jobs(1))).toBe(`The .gitlab-ci.yml defines more than ${MAX_STAGES} stages`);
    expect(error(stages(10) + jobs(MAX_JOBS + 1))).toBe(`The .gitlab-ci.yml defines more than ${MAX_JOBS} jobs`);
    // 1,400 stages x 1,400 jobs, the file that stalled the server for seconds: refused at once
    const N = 1400;
    expect(error(stages(N) + jobs(N, () => `s${N - 1}`))).toBe(`The .gitlab-ci.yml defines more than ${MAX_JOBS} jobs`);
    const r = processCiConfig({
      content: stages(MAX_STAGES) + jobs(MAX_JOBS, (i) => `s${i % MAX_STAGES}`),
      ref: { name: 'master', tag: false, trigger: false },
    });
    expect(r.ok && r.plan!.stages.length).toBe(MAX_STAGES);
    expect(r.ok && r.plan!.builds.map((b) => b.length)).toEqual(Array(MAX_STAGES).fill(MAX_JOBS / MAX_STAGES));
    expect(r.ok && r.plan!.builds[3].map((b) => [b.name, b.stage, b.stageIdx])).toContainEqual(['j3', 's3', 3]);
  });

  it('the plan groups the builds by stage, in the file order, and leaves out what the ref does not run', () => {
    const r = processCiConfig({
      content:
        'stages: [a, b, c]\nx:\n  stage: c\n  script: x\ny:\n  stage: a\n  script: y\nz:\n  stage: c\n  script: z\nw:\n  stage: b\n  script: w\n  only: [tags]\n',
      ref: { name: 'master', tag: false, trigger: false },
    });
    expect(r.ok && r.plan!.builds.map((s) => s.map((b) => b.name))).toEqual([['y'], [], ['x', 'z']]);
    expect(processCiConfig({ content: 'x:\n  script: x\n' })).toEqual({ ok: true });
    expect(processCiConfig({ content: 'x: 1\n' })).toEqual({ ok: false, error: 'Unknown parameter: x' });
  });

  it('refuses job and stage names longer than their columns (255)', () => {
    const long = 'n'.repeat(256);
    expect(error(`${long}:\n  script: x\n`)).toBe(`jobs:${'n'.repeat(60)}… name is too long (maximum is 255 characters)`);
    expect(error(`stages: [${long}]\nx:\n  stage: ${long}\n  script: x\n`)).toBe(`stages: ${'n'.repeat(60)}… is too long (maximum is 255 characters)`);
    expect(error(`${'n'.repeat(255)}:\n  script: x\n`)).toBeNull();
  });

  it('counts what aliases expand to, not how often they are used: a .defaults merged into 300 jobs is fine', () => {
    // the yaml package's maxAliasCount (200 before) refused this common file
    const defaults = '.defaults: &defaults\n  tags: [ruby]\n  allow_failure: true\n';
    const content = defaults + Array.from({ length: 300 }, (_, i) => `j${i}:\n  <<: *defaults\n  script: x\n`).join('');
    const r = processCiConfig({ content, ref: { name: 'master', tag: false, trigger: false } });
    expect(r.ok && r.plan!.builds[1].length).toBe(300);
    expect(r.ok && r.plan!.builds[1][299]).toMatchObject({ tagList: ['ruby'], allowFailure: true });
  });

  it('refuses a large list aliased many times (under the old alias count, 10,000 strings x 100 jobs)', () => {
    const big = `.big: &big [${Array.from({ length: 10000 }, (_, i) => `"s${i}"`).join(',')}]\n`;
    const content = big + Array.from({ length: 100 }, (_, i) => `j${i}:\n  script: *big\n`).join('');
    const started = Date.now();
    expect(error(content)).toMatch(/^\(<unknown>\): the document expands to more than 4 MB once its aliases are resolved/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('refuses merge keys that copy a large map into many jobs', () => {
    const d = '.d: &d\n' + Array.from({ length: 5000 }, (_, i) => `  k${i}: v\n`).join('');
    const content = d + Array.from({ length: 200 }, (_, i) => `j${i}:\n  <<: *d\n  script: x\n`).join('');
    expect(error(content)).toMatch(/expands to more than 4 MB/);
  });

  it('refuses a megabyte of nested brackets quickly, and an alias inside its own anchor', () => {
    const deep = 'rspec:\n  script: x\n  variables: ' + '['.repeat(500000) + ']'.repeat(500000) + '\n';
    const started = Date.now();
    expect(error(deep)).toBe('(<unknown>): the document is nested too deeply');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error('a: &a [1, *a]\nrspec:\n  script: x\n')).toBe('(<unknown>): the document is nested too deeply');
    const blockNested = Array.from({ length: 70 }, (_, i) => `${' '.repeat(4 + 2 * i)}k${i}:`).join('\n');
    expect(error(`rspec:\n  script: x\n  variables:\n${blockNested} v\n`)).toBe('(<unknown>): the document is nested too deeply');
  });

  it('refuses more than 5,000 aliases', () => {
    const content = '.a: &a x\nrspec:\n  script: [' + Array(5001).fill('*a').join(',') + ']\n';
    expect(error(content)).toBe('(<unknown>): the document has more than 5000 aliases');
  });

  it('refuses builds that are too large together (the global before_script is copied into every job)', () => {
    const before = 'before_script:\n' + Array.from({ length: 2000 }, () => `  - echo ${'y'.repeat(100)}\n`).join('');
    expect(error(before + jobs(1000, () => 'test'))).toMatch(/^The \.gitlab-ci\.yml makes builds of more than 8 MB in all/);
    expect(error(before + jobs(10, () => 'test'))).toBeNull();
  });
});

describe('parseDuration', () => {
  it.each([
    ['3600', 3600],
    ['1 week', 604800],
    ['3 days 4 hrs', 3 * 86400 + 4 * 3600],
    ['30 mins', 1800],
    ['2h', 7200],
    ['1 day and 1 second', 86401],
  ])('%s', (text, seconds) => expect(parseDuration(text)).toBe(seconds));
  it.each(['soon', '', 'week 1', '3 parsecs'])('rejects %s', (text) => expect(parseDuration(text)).toBeUndefined());
});
