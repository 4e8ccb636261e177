import { stringify } from 'yaml';
import { BuildAttributes, CiConfig, CiConfigError, MAX_JOBS, MAX_LISTED_ERRORS, MAX_STAGES, parseDuration, processCiConfig } from './ci-config';

type Obj = Record<string, unknown>;

const job = (extra = '') => `rspec:\n  script: rake spec\n${extra}`;

describe('CiConfig: GitLab 8.17 error texts (its Entry tree: "<location> <attribute> <message>", downcased)', () => {
  const cases: [string, string, string][] = [
    ['empty file', '', 'Invalid configuration format'],
    ['only a comment', '# nothing\n', 'Invalid configuration format'],
    ['not a hash', '- a\n- b\n', 'Invalid configuration format'],
    ['a scalar', 'hello', 'Invalid configuration format'],
    ['no job', 'before_script: ["a"]\n', 'jobs config should contain at least one visible job'],
    ['only hidden jobs', '.hidden:\n  script: x\n', 'jobs config should contain at least one visible job'],
    ['a hidden job with nothing in it', '.hidden: ~\n' + job(), "jobs:.hidden config can't be blank"],
    ['a hidden job that is an empty list', '.hidden: []\n' + job(), "jobs:.hidden config can't be blank"],
    ['job without script', 'rspec:\n  stage: test\n', "jobs:rspec script can't be blank"],
    ['job with other keys but no script', 'job1:\n  tags: [a]\n  only: [master]\n', "jobs:job1 script can't be blank"],
    ['job with a blank script', 'rspec:\n  script: "  "\n', "jobs:rspec script can't be blank"],
    ['job with an empty script list', 'rspec:\n  script: []\n', "jobs:rspec script can't be blank"],
    ['job that is not a hash', 'rspec: "echo"\n', 'jobs:rspec config should be a hash'],
    ['job that is a list', 'rspec: [a]\n', 'jobs:rspec config should be a hash'],
    ['empty job hash', 'rspec: {}\n', "jobs:rspec config can't be blank"],
    ['null job', 'rspec:\n', "jobs:rspec config can't be blank"],
    ['unknown top-level key (a typo of a global key) is a job', 'before_scrip: ["a"]\n' + job(), 'jobs:before_scrip config should be a hash'],
    ['empty job name', '"":\n  script: x\n', "jobs:job name can't be blank"],
    ['global before_script not array', 'before_script: "x"\n' + job(), 'before_script config should be an array of strings'],
    ['global before_script not strings', 'before_script: [10, "x"]\n' + job(), 'before_script config should be an array of strings'],
    ['global after_script not array', 'after_script: "x"\n' + job(), 'after_script config should be an array of strings'],
    ['global image not string', 'image: ["a"]\n' + job(), 'image config should be a string'],
    ['global image false', 'image: false\n' + job(), 'image config should be a string'],
    ['global services not array', 'services: "pg"\n' + job(), 'services config should be an array of strings'],
    ['global services not strings', 'services: [10, "pg"]\n' + job(), 'services config should be an array of strings'],
    ['stages not array', 'stages: "build"\n' + job(), 'stages config should be an array of strings'],
    ['stages not strings', 'stages: [true, test]\n' + job(), 'stages config should be an array of strings'],
    ['types not array', 'types: 1\n' + job(), 'types config should be an array of strings'],
    ['types are not checked when stages are given', 'stages: [test]\ntypes: 1\n' + job(), ''],
    ['global variables not strings', 'variables:\n  A: 1\n' + job(), 'variables config should be a hash of key value pairs'],
    ['global variables false', 'variables:\n  A: false\n' + job(), 'variables config should be a hash of key value pairs'],
    ['global variables not a map', 'variables: ["a"]\n' + job(), 'variables config should be a hash of key value pairs'],
    ['global variables: false', 'variables: false\n' + job(), 'variables config should be a hash of key value pairs'],
    ['global cache not a hash', 'cache: ls\n' + job(), 'cache config should be a hash'],
    ['global cache unknown key', 'cache:\n  untracked: true\n  invalid: key\n' + job(), 'cache config contains unknown keys: invalid'],
    ['global cache key', 'cache:\n  key: 1\n' + job(), 'cache:key config should be a string or symbol'],
    ['global cache untracked', 'cache:\n  untracked: "yes"\n' + job(), 'cache:untracked config should be a boolean value'],
    ['global cache paths', 'cache:\n  paths: "a"\n' + job(), 'cache:paths config should be an array of strings'],
    ['unknown job key', job('  foo: bar\n'), 'jobs:rspec config contains unknown keys: foo'],
    ['unknown job keys, listed', job('  foo: bar\n  Bar: 1\n'), 'jobs:rspec config contains unknown keys: foo, bar'],
    ['the message is downcased, the job name too', 'RSpec:\n  script: x\n  tags: mysql\n', 'jobs:rspec tags should be an array of strings'],
    ['script wrong type', 'rspec:\n  script: 1\n', 'jobs:rspec:script config should be a string or an array of strings'],
    ['script array of non-strings', 'rspec:\n  script: [1]\n', 'jobs:rspec:script config should be a string or an array of strings'],
    ['script of nested arrays', 'rspec:\n  script: [[a]]\n', 'jobs:rspec:script config should be a string or an array of strings'],
    ['job before_script', job('  before_script: "x"\n'), 'jobs:rspec:before_script config should be an array of strings'],
    ['job before_script not strings', job('  before_script: [10, "x"]\n'), 'jobs:rspec:before_script config should be an array of strings'],
    ['job after_script', job('  after_script: [10, "x"]\n'), 'jobs:rspec:after_script config should be an array of strings'],
    ['job image', job('  image: [1]\n'), 'jobs:rspec:image config should be a string'],
    ['job services', job('  services: "x"\n'), 'jobs:rspec:services config should be an array of strings'],
    ['job services not strings', job('  services: [10, "x"]\n'), 'jobs:rspec:services config should be an array of strings'],
    ['tags', job('  tags: "ruby"\n'), 'jobs:rspec tags should be an array of strings'],
    ['tags of numbers', job('  tags: [1]\n'), 'jobs:rspec tags should be an array of strings'],
    ['only', job('  only: "master"\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
    ['only integer', job('  only: 1\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
    ['only integers', job('  only: [1, 1]\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
    ['only invalid regexp', job('  only: ["/*invalid/"]\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
    ['except', job('  except: "master"\n'), 'jobs:rspec:except config should be an array of strings or regexps'],
    ['except integer', job('  except: 1\n'), 'jobs:rspec:except config should be an array of strings or regexps'],
    ['except integers', job('  except: [1, 1]\n'), 'jobs:rspec:except config should be an array of strings or regexps'],
    ['except invalid regexp', job('  except: ["/*invalid/"]\n'), 'jobs:rspec:except config should be an array of strings or regexps'],
    ['allow_failure', job('  allow_failure: "string"\n'), 'jobs:rspec allow failure should be a boolean value'],
    ['when', job('  when: sometimes\n'), 'jobs:rspec when should be on_success, on_failure, always or manual'],
    ['when integer', job('  when: 1\n'), 'jobs:rspec when should be on_success, on_failure, always or manual'],
    ['job stage not a string', job('  stage: [a]\n'), 'jobs:rspec:stage config should be a string'],
    ['job type not a string', job('  type: 1\n'), 'jobs:rspec:type config should be a string'],
    ['stage not in list', job('  stage: nope\n'), 'rspec job: stage parameter should be build, test, deploy'],
    ['type not in the default list', job('  type: acceptance\n'), 'rspec job: stage parameter should be build, test, deploy'],
    ['type not in custom types', 'types: [build, test]\n' + job('  type: acceptance\n'), 'rspec job: stage parameter should be build, test'],
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
    ['job variables', job('  variables:\n    A: [1]\n'), 'jobs:rspec:variables config should be a hash of key value pairs'],
    ['job variables a list', job('  variables: [VAR1, value1, VAR2, value2]\n'), 'jobs:rspec:variables config should be a hash of key value pairs'],
    ['job cache not a hash', job('  cache: [a]\n'), 'jobs:rspec:cache config should be a hash'],
    ['job cache unknown', job('  cache:\n    foo: 1\n'), 'jobs:rspec:cache config contains unknown keys: foo'],
    ['job cache key', job('  cache:\n    key: 1\n'), 'jobs:rspec:cache:key config should be a string or symbol'],
    ['job cache untracked', job('  cache:\n    untracked: "string"\n'), 'jobs:rspec:cache:untracked config should be a boolean value'],
    ['job cache paths', job('  cache:\n    paths: "string"\n'), 'jobs:rspec:cache:paths config should be an array of strings'],
    ['artifacts not a hash', job('  artifacts: [a]\n'), 'jobs:rspec:artifacts config should be a hash'],
    ['artifacts unknown', job('  artifacts:\n    test: 100\n'), 'jobs:rspec:artifacts config contains unknown keys: test'],
    ['artifacts name', job('  artifacts:\n    name: 1\n'), 'jobs:rspec:artifacts name should be a string'],
    ['artifacts untracked', job('  artifacts:\n    untracked: "string"\n'), 'jobs:rspec:artifacts untracked should be a boolean value'],
    ['artifacts paths', job('  artifacts:\n    paths: "string"\n'), 'jobs:rspec:artifacts paths should be an array of strings'],
    ['artifacts when', job('  artifacts:\n    when: 1\n'), 'jobs:rspec:artifacts when should be on_success, on_failure or always'],
    ['artifacts when manual', job('  artifacts:\n    when: manual\n'), 'jobs:rspec:artifacts when should be on_success, on_failure or always'],
    ['artifacts expire_in integer', job('  artifacts:\n    expire_in: 1\n'), 'jobs:rspec:artifacts expire in should be a duration'],
    ['artifacts expire_in elephants', job('  artifacts:\n    expire_in: 7 elephants\n'), 'jobs:rspec:artifacts expire in should be a duration'],
    ['dependencies type', job('  dependencies: "string"\n'), 'jobs:rspec dependencies should be an array of strings'],
    ['dependencies of numbers', job('  dependencies: [1]\n'), 'jobs:rspec dependencies should be an array of strings'],
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
    ['dependency on a hidden job', '.lint:\n  stage: build\n  script: x\n' + job('  dependencies: [".lint"]\n'), 'rspec job: undefined dependency: .lint'],
    ['environment not a string', job('  environment: 1\n'), 'jobs:rspec:environment config should be a hash or a string'],
    ['environment a list', job('  environment: [env]\n'), 'jobs:rspec:environment config should be a hash or a string'],
    [
      'environment name with a colon',
      job('  environment: production:staging\n'),
      "jobs:rspec:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
    ],
    ['environment without name', job('  environment:\n    url: https://example.gitlab.com\n'), "jobs:rspec:environment name can't be blank"],
    ['environment blank name', job('  environment: "  "\n'), "jobs:rspec:environment name can't be blank"],
    [
      'environment name not a string',
      job('  environment:\n    name: [a]\n'),
      "jobs:rspec:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
    ],
    ['environment unknown key', job('  environment:\n    name: review\n    when: x\n'), 'jobs:rspec:environment config contains unknown keys: when'],
    ['environment action', job('  environment:\n    name: production\n    action: invalid\n'), 'jobs:rspec:environment action should be start or stop'],
    ['environment on_stop', job('  environment:\n    name: production\n    on_stop: false\n'), 'jobs:rspec:environment on stop should be a string'],
    [
      'environment url too long',
      job(`  environment:\n    name: production\n    url: http://${'a'.repeat(250)}\n`),
      'jobs:rspec:environment url is too long (maximum is 255 characters)',
    ],
    [
      'environment url not a string (this server: 8.17 took a number)',
      job('  environment:\n    name: p\n    url: [a]\n'),
      'jobs:rspec:environment url should be a string',
    ],
    ['coverage without slashes', job("  coverage: 'Code coverage: \\d+\\.\\d+'\n"), 'jobs:rspec:coverage config must be a regular expression'],
    ['coverage malformed', job("  coverage: '/(malformed regexp/'\n"), 'jobs:rspec:coverage config must be a regular expression'],
    ['coverage not a string', job('  coverage: 1\n'), 'jobs:rspec:coverage config must be a regular expression'],
    ['invalid regexp before a project', job('  only: ["/(/@group/project"]\n'), 'jobs:rspec:only config should be an array of strings or regexps'],
    ['overlong regexp', job(`  except: ["/${'a'.repeat(300)}/"]\n`), 'rspec job: except parameter regexp is longer than 256 characters'],
    ['overlong coverage regexp', job(`  coverage: "/${'a'.repeat(300)}/"\n`), 'rspec job: coverage parameter regexp is longer than 256 characters'],
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
    if (message === '') return expect(error).toBeUndefined();
    expect(error).toBeInstanceOf(CiConfigError);
    if (message.endsWith(': ')) expect((error as Error).message.startsWith(message)).toBe(true);
    else expect((error as Error).message).toBe(message);
  });

  it('validationMessage returns null for a valid file', () => {
    expect(CiConfig.validationMessage(job())).toBeNull();
    expect(CiConfig.validationMessage('x: 1')).toBe('jobs:x config should be a hash');
    // 8.17's validation_message: a blank content is not looked at (a pipeline's empty file is "Invalid configuration format")
    expect(CiConfig.validationMessage('')).toBe('Please provide content of .gitlab-ci.yml');
    expect(CiConfig.validationMessage(' \n')).toBe('Please provide content of .gitlab-ci.yml');
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
    // a symbol key is its name (8.17's deep_symbolize_keys: `:a:` and `a:` are one key); a symbol value its text
    expect(new CiConfig(':a:\n  script: x\n  variables:\n    :B: :c\n').buildsForRef('master')).toMatchObject([
      { name: 'a', yamlVariables: [{ key: 'B', value: ':c', public: true }] },
    ]);
  });

  it("a file as Ruby's YAML.dump writes a hash of symbols (`:rspec:`, `:script:`) is the same file", () => {
    const yml = '---\n:before_script:\n- pwd\n:rspec:\n  :script: rspec\n  :stage: test\n  :environment:\n    :name: production\n    :url: http://x\n';
    expect(CiConfig.validationMessage(yml)).toBeNull();
    expect(new CiConfig(yml).buildsForRef('master')).toMatchObject([
      { name: 'rspec', commands: 'pwd\nrspec', environment: 'production', options: { environment: { name: 'production', url: 'http://x' } } },
    ]);
    expect(CiConfig.validationMessage('---\n:rspec:\n  :script: test\n  :tags: mysql\n')).toBe('jobs:rspec tags should be an array of strings');
  });

  it("booleans are Psych's (YAML 1.1): yes/no/on/off in any case; y and n, and quoted ones, are strings", () => {
    const b = new CiConfig('rspec:\n  script: x\n  allow_failure: Yes\n  cache:\n    untracked: on\n  artifacts:\n    untracked: OFF\n').buildsForRef('m')[0];
    expect(b.allowFailure).toBe(true);
    expect(b.options.cache).toEqual({ untracked: true });
    expect(b.options.artifacts).toEqual({ untracked: false });
    expect(CiConfig.validationMessage('rspec:\n  script: x\n  variables:\n    DEBUG: on\n')).toBe(
      'jobs:rspec:variables config should be a hash of key value pairs',
    );
    expect(new CiConfig('rspec:\n  script: x\n  variables:\n    A: y\n    B: "yes"\n    C: n\n').buildsForRef('m')[0].yamlVariables).toEqual([
      { key: 'A', value: 'y', public: true },
      { key: 'B', value: 'yes', public: true },
      { key: 'C', value: 'n', public: true },
    ]);
    expect(CiConfig.validationMessage('on:\n  script: x\n')).toBe('jobs:true name should be a symbol');
  });

  it('a hash key YAML reads as no string (1:, true:, ~:) is no variable name, and is listed as 8.17 prints it', () => {
    expect(CiConfig.validationMessage('variables:\n  1: a\n' + job())).toBe('variables config should be a hash of key value pairs');
    expect(CiConfig.validationMessage(job('  variables:\n    true: a\n'))).toBe('jobs:rspec:variables config should be a hash of key value pairs');
    expect(CiConfig.validationMessage(job('  variables:\n    ~: a\n'))).toBe('jobs:rspec:variables config should be a hash of key value pairs');
    expect(CiConfig.validationMessage(job('  1: x\n  cache:\n    2: y\n'))).toBe('jobs:rspec config contains unknown keys: 1');
    expect(CiConfig.validationMessage(job('  cache:\n    2: y\n'))).toBe('jobs:rspec:cache config contains unknown keys: 2');
    // quoted, they are strings; in a hidden job, nothing is checked
    expect(new CiConfig(job('  variables:\n    "1": a\n')).buildsForRef('m')[0].yamlVariables).toEqual([{ key: '1', value: 'a', public: true }]);
    expect(CiConfig.validationMessage('.x:\n  1: a\n' + job())).toBeNull();
  });

  it("jobs keep the file's order, quoted numbers among them (a JS object would list them first)", () => {
    const c = new CiConfig('build:\n  script: x\n"10":\n  script: x\n"2":\n  script: x\nlint:\n  script: x\n');
    expect(c.jobNames()).toEqual(['build', '10', '2', 'lint']);
    expect(c.buildsForRef('master').map((b) => b.name)).toEqual(['build', '10', '2', 'lint']);
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

  it('maps every keyword as GitLab 8.17 does', () => {
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
    expect(error(stages(N) + jobs(N, () => `s${N - 1}`))).toBe(`The .gitlab-ci.yml defines more than ${MAX_STAGES} stages`);
    expect(error(stages(10) + jobs(N, () => 's9'))).toBe(`The .gitlab-ci.yml defines more than ${MAX_JOBS} jobs`);
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
    expect(processCiConfig({ content: 'x: 1\n' })).toEqual({ ok: false, error: 'jobs:x config should be a hash' });
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

/**
 * GitLab 8.17's processor examples (spec/lib/ci/gitlab_ci_yaml_processor_spec.rb), each as a test of
 * ours: the file is written as 8.17's spec writes it (`YAML.dump` of a hash: `stringify` here), the
 * processor made with the project path `path`, and the builds compared field by field (8.17's
 * `build_attributes`: stage, stage_idx, name, commands, coverage_regex, tag_list, options,
 * allow_failure, when, environment, yaml_variables).
 */
describe('CiConfig: GitLab 8.17 processor examples', () => {
  const dump = (o: unknown) => stringify(o);
  const processor = (o: unknown, path: string | undefined = 'path') => new CiConfig(typeof o === 'string' ? o : dump(o), path);
  const failure = (o: unknown, path?: string) => {
    try {
      processor(o, path);
    } catch (e) {
      if (e instanceof CiConfigError) return e.message;
      throw e;
    }
    return null;
  };
  /** A build as 8.17's spec lists one, with its defaults. */
  const build = (b: Partial<BuildAttributes> & { name: string }): BuildAttributes => ({
    stage: 'test',
    stageIdx: 1,
    commands: '',
    tagList: [],
    options: {},
    allowFailure: false,
    when: 'on_success',
    yamlVariables: [],
    ...b,
  });

  describe('build attributes: coverage', () => {
    it('includes the coverage regexp, without its slashes', () => {
      const c = processor({ rspec: { script: 'rspec', coverage: '/Code coverage: \\d+\\.\\d+/' } });
      expect(c.buildsForRef('master')[0].coverageRegex).toBe('Code coverage: \\d+\\.\\d+');
    });
  });

  describe('builds for a ref', () => {
    it('returns builds if no branch specified', () => {
      const c = processor({ before_script: ['pwd'], rspec: { script: 'rspec' } });
      expect(c.buildsForStageAndRef('test', 'master')).toEqual([build({ name: 'rspec', commands: 'pwd\nrspec' })]);
      expect(c.buildsForStageAndRef('test', 'master')[0].environment).toBeUndefined();
      expect(c.buildsForStageAndRef('test', 'master')[0].coverageRegex).toBeUndefined();
    });

    const count = (rspec: Obj, ref: string, trigger = false, path = 'path') =>
      processor({ before_script: ['pwd'], rspec: { script: 'rspec', ...rspec } }, path).buildsForStageAndRef('test', ref, false, trigger).length;

    describe('only', () => {
      it.each<[string, Obj, string, boolean, number]>([
        ['does not return builds if only has another branch', { only: ['deploy'] }, 'master', false, 0],
        ['does not return builds if only has regexp with another branch', { only: ['/^deploy$/'] }, 'master', false, 0],
        ['returns builds if only has specified this branch', { only: ['master'] }, 'master', false, 1],
        ['returns builds if only has a list of branches including specified', { type: 'test', only: ['master', 'deploy'] }, 'deploy', false, 1],
        ['returns builds if only has a branches keyword specified', { type: 'test', only: ['branches'] }, 'deploy', false, 1],
        ['does not return builds if only has a tags keyword', { type: 'test', only: ['tags'] }, 'deploy', false, 0],
        ['returns builds if only has a triggers keyword specified and a trigger is provided', { only: ['triggers'] }, 'deploy', true, 1],
        ['does not return builds if only has a triggers keyword specified and no trigger is provided', { only: ['triggers'] }, 'deploy', false, 0],
        ['returns builds if only has current repository path', { only: ['branches@path'] }, 'deploy', false, 1],
        ['does not return builds if only has different repository path', { only: ['branches@fork'] }, 'deploy', false, 0],
      ])('%s', (_name, rspec, ref, trigger, n) => expect(count(rspec, ref, trigger)).toBe(n));

      it('returns build only for specified type', () => {
        const c = processor(
          {
            before_script: ['pwd'],
            rspec: { script: 'rspec', type: 'test', only: ['master', 'deploy'] },
            staging: { script: 'deploy', type: 'deploy', only: ['master', 'deploy'] },
            production: { script: 'deploy', type: 'deploy', only: ['master@path', 'deploy'] },
          },
          'fork',
        );
        expect(c.buildsForStageAndRef('deploy', 'deploy')).toHaveLength(2);
        expect(c.buildsForStageAndRef('test', 'deploy')).toHaveLength(1);
        expect(c.buildsForStageAndRef('deploy', 'master')).toHaveLength(1);
      });

      it.each<[string, unknown]>([
        ['integer', 1],
        ['an array of integers', [1, 1]],
        ['invalid regex', ['/*invalid/']],
      ])('refuses an invalid value: %s', (_name, only) => {
        expect(failure({ rspec: { script: 'rspec', type: 'test', only } })).toBe('jobs:rspec:only config should be an array of strings or regexps');
      });
    });

    describe('except', () => {
      it.each<[string, Obj, string, boolean, number]>([
        ['returns builds if except has another branch', { except: ['deploy'] }, 'master', false, 1],
        ['returns builds if except has regexp with another branch', { except: ['/^deploy$/'] }, 'master', false, 1],
        ['does not return builds if except has specified this branch', { except: ['master'] }, 'master', false, 0],
        ['does not return builds if except has a list of branches including specified', { except: ['master', 'deploy'] }, 'deploy', false, 0],
        ['does not return builds if except has a branches keyword specified', { except: ['branches'] }, 'deploy', false, 0],
        ['returns builds if except has a tags keyword', { except: ['tags'] }, 'deploy', false, 1],
        ['does not return builds if except has a triggers keyword specified and a trigger is provided', { except: ['triggers'] }, 'deploy', true, 0],
        ['returns builds if except has a triggers keyword specified and no trigger is provided', { except: ['triggers'] }, 'deploy', false, 1],
        ['does not return builds if except has current repository path', { except: ['branches@path'] }, 'deploy', false, 0],
        ['returns builds if except has different repository path', { except: ['branches@fork'] }, 'deploy', false, 1],
      ])('%s', (_name, rspec, ref, trigger, n) => expect(count(rspec, ref, trigger)).toBe(n));

      it('returns build except specified type', () => {
        const c = processor(
          {
            before_script: ['pwd'],
            rspec: { script: 'rspec', type: 'test', except: ['master', 'deploy', 'test@fork'] },
            staging: { script: 'deploy', type: 'deploy', except: ['master'] },
            production: { script: 'deploy', type: 'deploy', except: ['master@fork'] },
          },
          'fork',
        );
        expect(c.buildsForStageAndRef('deploy', 'deploy')).toHaveLength(2);
        expect(c.buildsForStageAndRef('test', 'test')).toHaveLength(0);
        expect(c.buildsForStageAndRef('deploy', 'master')).toHaveLength(0);
      });

      it.each<[string, unknown]>([
        ['integer', 1],
        ['an array of integers', [1, 1]],
        ['invalid regex', ['/*invalid/']],
      ])('refuses an invalid value: %s', (_name, except) => {
        expect(failure({ rspec: { script: 'rspec', except } })).toBe('jobs:rspec:except config should be an array of strings or regexps');
      });
    });

    it('a lone "/" is the empty regexp, matching every ref (as 8.17 reads "/")', () => {
      expect(count({ only: ['/'] }, 'anything')).toBe(1);
    });

    it('regexps read as Ruby reads them: \\A and \\z anchor the text, \\h is a hex digit', () => {
      expect(count({ only: ['/\\Arelease-\\h+\\z/'] }, 'release-ff09')).toBe(1);
      expect(count({ only: ['/\\Arelease-\\h+\\z/'] }, 'release-xyz')).toBe(0);
      expect(count({ only: ['/\\Arelease-\\h+\\z/'] }, 'a-release-ff')).toBe(0);
    });
  });

  describe('scripts', () => {
    const first = (o: Obj) => processor(o).buildsForStageAndRef('test', 'master')[0];
    it('global before_script is put before the script', () => {
      expect(first({ before_script: ['global script'], test: { script: ['script'] } }).commands).toBe('global script\nscript');
    });
    it('a job before_script replaces the global one', () => {
      expect(first({ before_script: ['global script'], test: { before_script: ['local script'], script: ['script'] } }).commands).toBe('local script\nscript');
    });
    it('script alone', () => {
      expect(first({ test: { script: ['script'] } }).commands).toBe('script');
    });
    it('global after_script is in the options', () => {
      expect(first({ after_script: ['after_script'], test: { script: ['script'] } }).options.after_script).toEqual(['after_script']);
    });
    it('a job after_script replaces the global one', () => {
      expect(first({ after_script: ['global after_script'], test: { after_script: ['local after_script'], script: ['script'] } }).options.after_script).toEqual(
        ['local after_script'],
      );
    });
  });

  describe('image and services', () => {
    it('returns image and service when defined', () => {
      const c = processor({ image: 'ruby:2.1', services: ['mysql'], before_script: ['pwd'], rspec: { script: 'rspec' } });
      expect(c.buildsForStageAndRef('test', 'master')).toEqual([
        build({ name: 'rspec', commands: 'pwd\nrspec', options: { image: 'ruby:2.1', services: ['mysql'] } }),
      ]);
    });
    it('returns image and service when overridden for job', () => {
      const c = processor({
        image: 'ruby:2.1',
        services: ['mysql'],
        before_script: ['pwd'],
        rspec: { image: 'ruby:2.5', services: ['postgresql'], script: 'rspec' },
      });
      expect(c.buildsForStageAndRef('test', 'master')).toEqual([
        build({ name: 'rspec', commands: 'pwd\nrspec', options: { image: 'ruby:2.5', services: ['postgresql'] } }),
      ]);
    });
  });

  describe('variables', () => {
    const vars = (o: Obj) => processor(o).buildsForRef('master')[0].yamlVariables;
    it('returns global variables', () => {
      expect(vars({ variables: { VAR1: 'value1', VAR2: 'value2' }, before_script: ['pwd'], rspec: { script: 'rspec' } })).toEqual([
        { key: 'VAR1', value: 'value1', public: true },
        { key: 'VAR2', value: 'value2', public: true },
      ]);
    });
    it('returns all unique variables when job and global variables are defined', () => {
      const v = vars({
        before_script: ['pwd'],
        variables: { VAR1: 'global1', VAR3: 'global3' },
        rspec: { script: 'rspec', variables: { VAR1: 'value1', VAR2: 'value2' } },
      });
      expect(v).toHaveLength(3);
      expect(v).toEqual(
        expect.arrayContaining([
          { key: 'VAR3', value: 'global3', public: true },
          { key: 'VAR1', value: 'value1', public: true },
          { key: 'VAR2', value: 'value2', public: true },
        ]),
      );
    });
    it('returns job variables', () => {
      expect(vars({ before_script: ['pwd'], rspec: { script: 'rspec', variables: { VAR1: 'value1', VAR2: 'value2' } } })).toEqual([
        { key: 'VAR1', value: 'value1', public: true },
        { key: 'VAR2', value: 'value2', public: true },
      ]);
    });
    it('refuses job variables that are a list', () => {
      expect(failure({ before_script: ['pwd'], rspec: { script: 'rspec', variables: ['VAR1', 'value1', 'VAR2', 'value2'] } })).toBe(
        'jobs:rspec:variables config should be a hash of key value pairs',
      );
    });
    it('job variables given but empty are none (issue 18775)', () => {
      expect(vars({ before_script: ['pwd'], rspec: { script: 'rspec', variables: null } })).toEqual([]);
    });
    it('no job variables: none', () => {
      expect(vars({ before_script: ['pwd'], rspec: { script: 'rspec' } })).toEqual([]);
    });
  });

  describe('when', () => {
    it.each(['on_success', 'on_failure', 'always', 'manual'])('returns %s when defined', (when) => {
      const builds = processor({ rspec: { script: 'rspec', when } }).buildsForStageAndRef('test', 'master');
      expect(builds).toHaveLength(1);
      expect(builds[0].when).toBe(when);
    });
  });

  describe('cache', () => {
    it('refuses unknown keys', () => {
      expect(failure({ cache: { untracked: true, invalid: 'key' }, rspec: { script: 'rspec' } })).toBe('cache config contains unknown keys: invalid');
    });
    it('returns cache when defined globally', () => {
      const b = processor({ cache: { paths: ['logs/', 'binaries/'], untracked: true, key: 'key' }, rspec: { script: 'rspec' } }).buildsForStageAndRef(
        'test',
        'master',
      );
      expect(b).toHaveLength(1);
      expect(b[0].options.cache).toEqual({ paths: ['logs/', 'binaries/'], untracked: true, key: 'key' });
    });
    it('returns cache when defined in a job', () => {
      const b = processor({ rspec: { cache: { paths: ['logs/', 'binaries/'], untracked: true, key: 'key' }, script: 'rspec' } }).buildsForStageAndRef(
        'test',
        'master',
      );
      expect(b[0].options.cache).toEqual({ paths: ['logs/', 'binaries/'], untracked: true, key: 'key' });
    });
    it('a job cache overrides the global one', () => {
      const b = processor({
        cache: { paths: ['logs/', 'binaries/'], untracked: true, key: 'global' },
        rspec: { script: 'rspec', cache: { paths: ['test/'], untracked: false, key: 'local' } },
      }).buildsForStageAndRef('test', 'master');
      expect(b[0].options.cache).toEqual({ paths: ['test/'], untracked: false, key: 'local' });
    });
  });

  describe('artifacts', () => {
    it('returns artifacts when defined', () => {
      const c = processor({
        image: 'ruby:2.1',
        services: ['mysql'],
        before_script: ['pwd'],
        rspec: { artifacts: { paths: ['logs/', 'binaries/'], untracked: true, name: 'custom_name', expire_in: '7d' }, script: 'rspec' },
      });
      expect(c.buildsForStageAndRef('test', 'master')).toEqual([
        build({
          name: 'rspec',
          commands: 'pwd\nrspec',
          options: {
            image: 'ruby:2.1',
            services: ['mysql'],
            artifacts: { name: 'custom_name', paths: ['logs/', 'binaries/'], untracked: true, expire_in: '7d' },
          },
        }),
      ]);
    });
    it.each(['on_success', 'on_failure', 'always'])('returns artifacts for when %s', (when) => {
      const b = processor({ rspec: { script: 'rspec', artifacts: { paths: ['logs/', 'binaries/'], when } } }).buildsForStageAndRef('test', 'master');
      expect(b).toHaveLength(1);
      expect(b[0].options.artifacts?.when).toBe(when);
    });
  });

  describe('environment', () => {
    const builds = (environment: unknown) =>
      processor({ deploy_to_production: { stage: 'deploy', script: 'test', environment } }).buildsForStageAndRef('deploy', 'master');
    it('a production environment (a string): the name, and options with action start', () => {
      const b = builds('production');
      expect(b).toHaveLength(1);
      expect(b[0].environment).toBe('production');
      expect(b[0].options.environment).toEqual({ name: 'production', action: 'start' });
    });
    it('a hash: the name and URL as given', () => {
      const env = { name: 'production', url: 'http://production.gitlab.com' };
      const b = builds(env);
      expect(b[0].environment).toBe('production');
      expect(b[0].options.environment).toEqual(env);
    });
    it('the url may have a variable for the port', () => {
      const env = { name: 'production', url: 'http://production.gitlab.com:$PORT' };
      expect(builds(env)[0].options.environment).toEqual(env);
    });
    it('names and URLs keep their variables (expanded when the build deploys)', () => {
      const env = { name: 'review/$CI_BUILD_REF_NAME', url: 'https://$CI_BUILD_REF_NAME.review.gitlab.com' };
      expect(builds(env)[0]).toMatchObject({ environment: 'review/$CI_BUILD_REF_NAME', options: { environment: env } });
      expect(builds('review/${CI_BUILD_REF_NAME}')[0].environment).toBe('review/${CI_BUILD_REF_NAME}');
    });
    it('no environment: none', () => {
      const b = builds(null);
      expect(b).toHaveLength(1);
      expect(b[0].environment).toBeUndefined();
      expect(b[0].options.environment).toBeUndefined();
    });
    it('refuses an environment that is not a string', () => {
      expect(failure({ deploy_to_production: { stage: 'deploy', script: 'test', environment: 1 } })).toBe(
        'jobs:deploy_to_production:environment config should be a hash or a string',
      );
    });
    it('refuses a name that is not valid', () => {
      expect(failure({ deploy_to_production: { stage: 'deploy', script: 'test', environment: 'production:staging' } })).toBe(
        "jobs:deploy_to_production:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
      );
    });

    describe('on_stop', () => {
      const review = { stage: 'deploy', script: 'test', environment: { name: 'review', on_stop: 'close_review' } };
      const withClose = (close_review: unknown) => ({ review, ...(close_review ? { close_review } : {}) });
      it('with a matching job: both builds', () => {
        const b = processor(withClose({ stage: 'deploy', script: 'test', environment: { name: 'review', action: 'stop' } })).buildsForStageAndRef(
          'deploy',
          'master',
        );
        expect(b).toHaveLength(2);
        expect(b[0].environment).toBe('review');
        expect(b[1].options.environment).toEqual({ name: 'review', action: 'stop' });
      });
      it.each<[string, unknown, string]>([
        ['without matching job', null, 'review job: on_stop job close_review is not defined'],
        ['with close job without environment', { stage: 'deploy', script: 'test' }, 'review job: on_stop job close_review does not have environment defined'],
        [
          'with close job for different environment',
          { stage: 'deploy', script: 'test', environment: 'production' },
          'review job: on_stop job close_review have different environment name',
        ],
        [
          'with close job without stop action',
          { stage: 'deploy', script: 'test', environment: { name: 'review' } },
          'review job: on_stop job close_review needs to have action stop defined',
        ],
        [
          'with close job whose environment is a string (a start)',
          { stage: 'deploy', script: 'test', environment: 'review' },
          'review job: on_stop job close_review needs to have action stop defined',
        ],
      ])('%s', (_name, close, message) => expect(failure(withClose(close))).toBe(message));
      it('a hidden job is no on_stop job', () => {
        expect(failure({ review, '.close_review': { stage: 'deploy', script: 'x', environment: { name: 'review', action: 'stop' } } })).toBe(
          'review job: on_stop job close_review is not defined',
        );
      });
    });
  });

  describe('dependencies', () => {
    const config = (dependencies: string) =>
      'build1:\n  stage: build\n  script: test\nbuild2:\n  stage: build\n  script: test\n' +
      `test1:\n  stage: test\n  script: test\n  dependencies: ${dependencies}\n` +
      'test2:\n  stage: test\n  script: test\ndeploy:\n  stage: test\n  script: test\n';
    it.each<[string, string, string | null]>([
      ['no dependencies', '~', null],
      ['dependencies to builds', '[build1, build2]', null],
      ['dependencies to builds defined as symbols', '[:build1, :build2]', null],
      ['undefined dependency', '[undefined]', 'test1 job: undefined dependency: undefined'],
      ['dependencies to deploy', '[deploy]', 'test1 job: dependency deploy is not defined in prior stages'],
    ])('%s', (_name, deps, message) => expect(failure(config(deps))).toBe(message));
    it('an empty list is kept (no artifacts to download)', () => {
      expect(
        processor(config('[]'))
          .buildsForRef('master')
          .find((b) => b.name === 'test1')?.options.dependencies,
      ).toEqual([]);
    });
  });

  describe('hidden jobs', () => {
    const normal = [build({ name: 'normal_job', commands: 'test' })];
    it('a hidden job with a script is no job', () => {
      expect(
        processor({ '.hidden_job': { image: 'ruby:2.1', script: 'test' }, normal_job: { script: 'test' } }).buildsForStageAndRef('test', 'master'),
      ).toEqual(normal);
    });
    it('a hidden job without a script is no job', () => {
      expect(processor({ '.hidden_job': { image: 'ruby:2.1' }, normal_job: { script: 'test' } }).buildsForStageAndRef('test', 'master')).toEqual(normal);
    });
    it('a hidden job may be anything that is not blank', () => {
      expect(failure('.a: [some, array]\n.b: text\nnormal_job:\n  script: test\n')).toBeNull();
    });
  });

  describe('YAML aliases and anchors', () => {
    const expected = [
      build({ name: 'job1', stage: 'build', stageIdx: 0, commands: 'execute-script-for-job' }),
      build({ name: 'job2', stage: 'build', stageIdx: 0, commands: 'execute-script-for-job' }),
    ];
    it.each([
      ['a job as the template', 'job1: &JOBTMPL\n  stage: build\n  script: execute-script-for-job\n\njob2: *JOBTMPL\n'],
      ['a hidden job as the template', '.template: &JOBTMPL\n  stage: build\n  script: execute-script-for-job\n\njob1: *JOBTMPL\n\njob2: *JOBTMPL\n'],
      [
        'jobs adding their own keys to the template',
        '.template: &JOBTMPL\n  stage: build\n\njob1:\n  <<: *JOBTMPL\n  script: execute-script-for-job\n\njob2:\n  <<: *JOBTMPL\n  script: execute-script-for-job\n',
      ],
    ])('%s', (_name, yml) => expect(processor(yml).buildsForStageAndRef('build', 'master')).toEqual(expected));
  });

  describe('error handling', () => {
    it('a YAML syntax error is reported as Psych does, (<unknown>): … at line L column C', () => {
      expect(failure('invalid: yaml: test')).toMatch(/^\(<unknown>\): .+ at line 1 column 10$/);
      expect(failure('rspec:\n\t script: x\n')).toMatch(/^\(<unknown>\): .+ at line 2 column 1$/);
    });
    it('a document that is no hash is "Invalid configuration format"', () => {
      expect(failure('invalid_yaml')).toBe('Invalid configuration format');
      expect(failure(dump('invalid: yaml: test'))).toBe('Invalid configuration format');
    });
    it.each<[string, unknown, string]>([
      ['tags', { rspec: { script: 'test', tags: 'mysql' } }, 'jobs:rspec tags should be an array of strings'],
      ['before_script', { before_script: 'bundle update', rspec: { script: 'test' } }, 'before_script config should be an array of strings'],
      ['job before_script', { rspec: { script: 'test', before_script: [10, 'test'] } }, 'jobs:rspec:before_script config should be an array of strings'],
      ['after_script', { after_script: 'bundle update', rspec: { script: 'test' } }, 'after_script config should be an array of strings'],
      ['job after_script', { rspec: { script: 'test', after_script: [10, 'test'] } }, 'jobs:rspec:after_script config should be an array of strings'],
      ['image', { image: ['test'], rspec: { script: 'test' } }, 'image config should be a string'],
      ['job name blank', { '': { script: 'test' } }, "jobs:job name can't be blank"],
      ['job image', { rspec: { script: 'test', image: ['test'] } }, 'jobs:rspec:image config should be a string'],
      ['services not an array', { services: 'test', rspec: { script: 'test' } }, 'services config should be an array of strings'],
      ['services not strings', { services: [10, 'test'], rspec: { script: 'test' } }, 'services config should be an array of strings'],
      ['job services not an array', { rspec: { script: 'test', services: 'test' } }, 'jobs:rspec:services config should be an array of strings'],
      ['job services not strings', { rspec: { script: 'test', services: [10, 'test'] } }, 'jobs:rspec:services config should be an array of strings'],
      ['job configuration', { extra: 'bundle update' }, 'jobs:extra config should be a hash'],
      ['services configuration', { extra: { script: 'rspec', services: 'test' } }, 'jobs:extra:services config should be an array of strings'],
      ['no jobs', { before_script: ['bundle update'] }, 'jobs config should contain at least one visible job'],
      ['no visible jobs', { before_script: ['bundle update'], '.hidden': { script: 'ls' } }, 'jobs config should contain at least one visible job'],
      ['allow_failure', { rspec: { script: 'test', allow_failure: 'string' } }, 'jobs:rspec allow failure should be a boolean value'],
      ['job stage not a string', { rspec: { script: 'test', type: 1 } }, 'jobs:rspec:type config should be a string'],
      ['job stage not a pre-defined stage', { rspec: { script: 'test', type: 'acceptance' } }, 'rspec job: stage parameter should be build, test, deploy'],
      [
        'job stage not a defined stage',
        { types: ['build', 'test'], rspec: { script: 'test', type: 'acceptance' } },
        'rspec job: stage parameter should be build, test',
      ],
      ['stages not an array', { stages: 'test', rspec: { script: 'test' } }, 'stages config should be an array of strings'],
      ['stages not strings', { stages: [true, 'test'], rspec: { script: 'test' } }, 'stages config should be an array of strings'],
      ['variables not a map', { variables: 'test', rspec: { script: 'test' } }, 'variables config should be a hash of key value pairs'],
      ['variables not strings', { variables: { test: false }, rspec: { script: 'test' } }, 'variables config should be a hash of key value pairs'],
      ['when', { rspec: { script: 'test', when: 1 } }, 'jobs:rspec when should be on_success, on_failure, always or manual'],
      ['artifacts:name', { types: ['build', 'test'], rspec: { script: 'test', artifacts: { name: 1 } } }, 'jobs:rspec:artifacts name should be a string'],
      [
        'artifacts:when',
        { types: ['build', 'test'], rspec: { script: 'test', artifacts: { when: 1 } } },
        'jobs:rspec:artifacts when should be on_success, on_failure or always',
      ],
      [
        'artifacts:expire_in not a string',
        { types: ['build', 'test'], rspec: { script: 'test', artifacts: { expire_in: 1 } } },
        'jobs:rspec:artifacts expire in should be a duration',
      ],
      [
        'artifacts:expire_in not a duration',
        { types: ['build', 'test'], rspec: { script: 'test', artifacts: { expire_in: '7 elephants' } } },
        'jobs:rspec:artifacts expire in should be a duration',
      ],
      [
        'artifacts:untracked',
        { types: ['build', 'test'], rspec: { script: 'test', artifacts: { untracked: 'string' } } },
        'jobs:rspec:artifacts untracked should be a boolean value',
      ],
      [
        'artifacts:paths',
        { types: ['build', 'test'], rspec: { script: 'test', artifacts: { paths: 'string' } } },
        'jobs:rspec:artifacts paths should be an array of strings',
      ],
      ['cache:untracked', { cache: { untracked: 'string' }, rspec: { script: 'test' } }, 'cache:untracked config should be a boolean value'],
      ['cache:paths', { cache: { paths: 'string' }, rspec: { script: 'test' } }, 'cache:paths config should be an array of strings'],
      ['cache:key', { cache: { key: 1 }, rspec: { script: 'test' } }, 'cache:key config should be a string or symbol'],
      ['job cache:key', { types: ['build', 'test'], rspec: { script: 'test', cache: { key: 1 } } }, 'jobs:rspec:cache:key config should be a string or symbol'],
      [
        'job cache:untracked',
        { types: ['build', 'test'], rspec: { script: 'test', cache: { untracked: 'string' } } },
        'jobs:rspec:cache:untracked config should be a boolean value',
      ],
      [
        'job cache:paths',
        { types: ['build', 'test'], rspec: { script: 'test', cache: { paths: 'string' } } },
        'jobs:rspec:cache:paths config should be an array of strings',
      ],
      [
        'job dependencies',
        { types: ['build', 'test'], rspec: { script: 'test', dependencies: 'string' } },
        'jobs:rspec dependencies should be an array of strings',
      ],
    ])('refuses invalid %s', (_name, config, message) => expect(failure(config, 'path')).toBe(message));
    it('refuses a non-string job name', () => {
      expect(failure('10:\n  script: test\n')).toBe('jobs:10 name should be a symbol');
    });
  });

  describe('validation message (POST /ci/lint)', () => {
    it('a document that is no hash', () => {
      expect(CiConfig.validationMessage(dump('invalid: yaml: test'))).toBe('Invalid configuration format');
    });
    it('invalid tags', () => {
      expect(CiConfig.validationMessage(dump({ rspec: { script: 'test', tags: 'mysql' } }))).toBe('jobs:rspec tags should be an array of strings');
    });
    it('empty content', () => {
      expect(CiConfig.validationMessage('')).toBe('Please provide content of .gitlab-ci.yml');
    });
    it('a typical file of the time (types, tags, only/except with a regexp, job variables) is valid', () => {
      const yml = [
        'image: ruby:2.1',
        'services: [postgres]',
        'before_script: [gem install bundler, bundle install, bundle exec rake db:create]',
        'variables:\n  DB_NAME: postgres',
        'types: [test, deploy, notify]',
        'rspec:\n  script: "rake spec"\n  tags: [ruby, postgres]\n  only: [branches]',
        'spinach:\n  script: "rake spinach"\n  allow_failure: true\n  tags: [ruby, mysql]\n  except: [tags]',
        'staging:\n  variables:\n    KEY1: value1\n    KEY2: value2\n  script: "cap deploy stating"\n  type: deploy\n  tags: [ruby, mysql]\n  except: [stable]',
        'production:\n  variables:\n    DB_NAME: mysql\n  type: deploy\n  script: [cap deploy production, cap notify]\n  tags: [ruby, mysql]\n  only: [master, /^deploy-.*$/]',
        'dockerhub:\n  type: notify\n  script: "curl http://dockerhub/URL"\n  tags: [ruby, postgres]\n  only: [branches]',
      ].join('\n');
      expect(CiConfig.validationMessage(yml)).toBeNull();
      expect(new CiConfig(yml).buildsForRef('deploy-1').map((b) => b.name)).toEqual(['rspec', 'spinach', 'staging', 'production', 'dockerhub']);
    });
  });
});

describe('CiConfig.allErrors: every error of a file (a push prints them), GitLab 8.17 texts, first one first', () => {
  it('lists every error, per key and per job, where GitLab stops at the first', () => {
    const yml =
      'image: [x]\nrspec:\n  script: x\n  coverage: nope\n  environment: 1\n  when: manual\n  foo: 1\nlint:\n  stage: nowhere\n  script: y\n  tags: ruby\n';
    expect(CiConfig.allErrors(yml)).toEqual([
      'image config should be a string',
      'jobs:rspec config contains unknown keys: foo',
      'jobs:rspec:environment config should be a hash or a string',
      "jobs:rspec:environment name can't be blank",
      "jobs:rspec:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
      'jobs:rspec:coverage config must be a regular expression',
      'jobs:lint tags should be an array of strings',
      'lint job: stage parameter should be build, test, deploy',
    ]);
    expect(CiConfig.validationMessage(yml)).toBe('image config should be a string');
  });

  it('the three errors a team met one push at a time in issue 38 are found at once (on an 8.8 grammar)', () => {
    const yml = 'rspec:\n  script: x\n  coverage: 1\n  environment: {name: "a:b"}\n  when: sometimes\n';
    expect(CiConfig.allErrors(yml)).toEqual([
      'jobs:rspec when should be on_success, on_failure, always or manual',
      "jobs:rspec:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces",
      'jobs:rspec:coverage config must be a regular expression',
    ]);
  });

  it('a valid file has none; an unreadable one has its one error', () => {
    expect(CiConfig.allErrors(job())).toEqual([]);
    expect(CiConfig.allErrors('- a\n')).toEqual(['Invalid configuration format']);
    expect(CiConfig.allErrors('a: [')[0]).toMatch(/^\(<unknown>\): /);
  });

  it('names every broken link between jobs (stages, dependencies, on_stop)', () => {
    const yml =
      'a:\n  stage: build\n  script: x\n  dependencies: [b, nope]\n  environment: {name: r, on_stop: stop_r}\n' +
      'b:\n  script: x\nstop_r:\n  script: x\n  environment: r\nc:\n  stage: zzz\n  script: x\n';
    expect(CiConfig.allErrors(yml)).toEqual([
      'a job: dependency b is not defined in prior stages',
      'a job: undefined dependency: nope',
      'a job: on_stop job stop_r needs to have action stop defined',
      'c job: stage parameter should be build, test, deploy',
    ]);
  });

  it(`lists at most ${MAX_LISTED_ERRORS}, then how many more`, () => {
    const yml = Array.from({ length: 60 }, (_, i) => `j${i}:\n  script: x\n  tags: t\n`).join('');
    const errors = CiConfig.allErrors(yml);
    expect(errors).toHaveLength(MAX_LISTED_ERRORS + 1);
    expect(errors[0]).toBe('jobs:j0 tags should be an array of strings');
    expect(errors[MAX_LISTED_ERRORS]).toBe('… and 10 more');
  });

  it('through the worker request: all errors, and the first as the error', () => {
    const r = processCiConfig({ content: 'rspec:\n  script: x\n  tags: a\n  when: b\n', all: true });
    expect(r).toEqual({
      ok: false,
      error: 'jobs:rspec tags should be an array of strings',
      errors: ['jobs:rspec tags should be an array of strings', 'jobs:rspec when should be on_success, on_failure, always or manual'],
    });
    expect(processCiConfig({ content: job(), all: true })).toEqual({ ok: true });
  });
});
