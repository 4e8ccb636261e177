import { Script, createContext } from 'node:vm';
import { Composer, Document, isAlias, isMap, isPair, isScalar, isSeq, Lexer, Parser, type ScalarTag } from 'yaml';

/**
 * `.gitlab-ci.yml` → jobs, with GitLab 8.8's semantics and error texts (`Ci::GitlabCiYamlProcessor`).
 * Pure: no I/O. The server runs it in a worker thread with a time budget (`ci-config-workers.ts`:
 * `processCiConfig` below is the whole of what the worker does), and the work is linear in the
 * file's size once its aliases are resolved: jobs are grouped by stage once, stages are looked up in
 * a map, never a stage × job loop.
 *
 * Parsing is YAML 1.2 core schema (no custom tags, no code). GitLab 8.17 capped none of this (its
 * `YAML.safe_load` expands aliases without bound); a hostile file must be an error and never an
 * outage, so these are refused with a message that says which limit: the document's size, its
 * nesting, the size it expands to once aliases and merge keys are resolved (measured on the parsed
 * tree before anything is expanded: a "billion laughs" costs a walk of its text, never its
 * expansion), the number of aliases, stages and jobs, the length of job and stage names (the
 * columns that hold them), and the total size of the builds a pipeline creates (global
 * `before_script`, `variables`… are copied into every job). `/regex/` patterns of `only`/`except`
 * are length-bounded and evaluated with a time limit.
 */

export class CiConfigError extends Error {}

export const DEFAULT_STAGES = ['build', 'test', 'deploy'];
const DEFAULT_STAGE = 'test';
export const MAX_CONFIG_BYTES = 1024 * 1024;
/**
 * What the document may expand to once aliases and merge keys are resolved, in characters (each
 * scalar counts its length plus one, each collection one): four times the largest file. The `yaml`
 * package's own `maxAliasCount` is not used: it counts alias uses weighted by the aliases nested in
 * what they point to (the largest, not the sum), not the size of what an alias brings, so a list of
 * 10,000 strings aliased 100 times passes it while a `.defaults` merged into 300 jobs is refused.
 */
export const MAX_EXPANDED_SIZE = 4 * 1024 * 1024;
/** Alias nodes in one document (`yaml` resolves each with a scan of every anchor and alias before it). */
export const MAX_ALIASES = 5000;
export const MAX_DEPTH = 64;
export const MAX_STAGES = 100;
export const MAX_JOBS = 1000;
/** Job and stage names are stored in varchar(255) columns (`commit_statuses.name`, `.stage`). */
export const MAX_NAME_LENGTH = 255;
/** The builds' commands, options and variables of all jobs together, in characters as above. */
export const MAX_BUILDS_SIZE = 8 * 1024 * 1024;
const MAX_REGEX_LENGTH = 256;
const REGEX_TIMEOUT_MS = 50;
const MB = 1024 * 1024;

const GLOBAL_KEYS = ['before_script', 'after_script', 'image', 'services', 'types', 'stages', 'variables', 'cache'];
const JOB_KEYS = [
  'tags',
  'script',
  'only',
  'except',
  'type',
  'image',
  'services',
  'allow_failure',
  'stage',
  'when',
  'artifacts',
  'cache',
  'dependencies',
  'before_script',
  'after_script',
  'variables',
];
const CACHE_KEYS = ['key', 'untracked', 'paths'];
// 8.8 had name/untracked/paths; `when` and `expire_in` are what runner 1.3 reads (additive)
const ARTIFACTS_KEYS = ['name', 'untracked', 'paths', 'when', 'expire_in'];
const WHEN = ['on_success', 'on_failure', 'always'];

/** A job's `when` (8.17 adds `manual`: an action a person starts, `POST /projects/:id/builds/:id/play`). */
export type When = 'on_success' | 'on_failure' | 'always' | 'manual';

/** A job's `environment`, as 8.17 keeps it in the build's options (`name` unexpanded: `$CI_BUILD_REF_NAME` stays). */
export interface JobEnvironment {
  name: string;
  url?: string;
  action?: 'start' | 'stop';
  on_stop?: string;
}

export interface YamlVariable {
  key: string;
  value: string;
  public: boolean;
}

export interface JobOptions {
  image?: string;
  services?: string[];
  artifacts?: Record<string, unknown>;
  cache?: Record<string, unknown>;
  dependencies?: string[];
  after_script?: string[];
  environment?: JobEnvironment;
}

/** What a build is created from. */
export interface BuildAttributes {
  name: string;
  stage: string;
  stageIdx: number;
  commands: string;
  tagList: string[];
  allowFailure: boolean;
  when: When;
  yamlVariables: YamlVariable[];
  options: JobOptions;
  /** The environment's name as written (8.17's `ci_builds.environment`), when the job has one. */
  environment?: string;
  /** The job's `coverage` regex source, without its slashes (8.17's `ci_builds.coverage_regex`). */
  coverageRegex?: string;
}

interface Job {
  name: string;
  stage: string;
  raw: Record<string, unknown>;
  only?: string[];
  except?: string[];
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isStrArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr);
const isBool = (v: unknown): v is boolean => v === true || v === false;
const isVariables = (v: unknown): v is Record<string, string> => isObj(v) && Object.values(v).every(isStr);
const present = (v: unknown) => v !== undefined && v !== null && v !== false;

/** `1 week`, `3 days 4 hrs`, `30 mins`, `2h`, `3600` (seconds): ChronicDuration's common forms. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim().toLowerCase();
  if (/^\d+$/.test(s)) return Number(s);
  const units: [RegExp, number][] = [
    [/^(s|sec|secs|second|seconds)$/, 1],
    [/^(m|min|mins|minute|minutes)$/, 60],
    [/^(h|hr|hrs|hour|hours)$/, 3600],
    [/^(d|day|days)$/, 86400],
    [/^(w|wk|wks|week|weeks)$/, 604800],
    [/^(mo|mos|month|months)$/, 2592000],
    [/^(y|yr|yrs|year|years)$/, 31536000],
  ];
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*(?:,|and)?\s*/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while (pos < s.length && (m = re.exec(s))) {
    const unit = units.find(([u]) => u.test(m![2]));
    if (!unit) return undefined;
    total += Number(m[1]) * unit[1];
    pos = re.lastIndex;
  }
  return pos === s.length && s.length > 0 ? Math.round(total) : undefined;
}

// one context for every `/regex/` test, with a time limit per test (V8 interrupts backtracking)
const regexContext = createContext({ re: /$^/, s: '' });
const regexTest = new Script('re.test(s)');

function testRegex(source: string, ref: string): boolean {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch {
    return false;
  }
  regexContext.re = re;
  regexContext.s = ref;
  try {
    return regexTest.runInContext(regexContext, { timeout: REGEX_TIMEOUT_MS }) === true;
  } catch {
    throw new CiConfigError(`regular expression /${source}/ is too expensive to evaluate`);
  }
}

const TOO_DEEP = '(<unknown>): the document is nested too deeply';
/** What PostgreSQL's text and jsonb cannot store (YAML's `"\\0"` and `"\\ud800"` escapes make them). */
// eslint-disable-next-line no-control-regex -- NUL is what is looked for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The size (as MAX_EXPANDED_SIZE counts it) and the nesting the document has once its aliases and
 * merge keys are resolved, computed on the parsed tree without resolving anything: each anchored
 * node is measured once and an alias counts what its anchor measured. Linear in the document's text.
 * Throws CiConfigError past a limit; an alias inside the node it names (a cycle) is too deep.
 */
function measure(doc: Document): void {
  const anchors = new Map<string, unknown>(); // the latest node of each anchor name, in document order
  const measured = new Map<unknown, { size: number; height: number }>();
  const open = new Set<unknown>();
  let aliases = 0;
  const tooLarge = () =>
    new CiConfigError(
      `(<unknown>): the document expands to more than ${MAX_EXPANDED_SIZE / MB} MB once its aliases are resolved (possible billion laughs attack)`,
    );
  const walk = (node: unknown, depth: number): { size: number; height: number } => {
    if (depth > MAX_DEPTH) throw new CiConfigError(TOO_DEEP);
    if (isAlias(node)) {
      if (++aliases > MAX_ALIASES) throw new CiConfigError(`(<unknown>): the document has more than ${MAX_ALIASES} aliases`);
      const target = anchors.get(node.source);
      if (target === undefined) return { size: 1, height: 0 }; // toJS says the alias is unresolved
      if (open.has(target)) throw new CiConfigError(TOO_DEEP);
      const m = measured.get(target) ?? { size: 1, height: 0 };
      if (depth + m.height > MAX_DEPTH) throw new CiConfigError(TOO_DEEP);
      return m;
    }
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) {
      anchors.set(anchor, node);
      open.add(node);
    }
    let size = 1;
    let height = 0;
    const add = (child: unknown) => {
      const m = walk(child, depth + 1);
      size += m.size;
      if (size > MAX_EXPANDED_SIZE) throw tooLarge();
      if (m.height + 1 > height) height = m.height + 1;
    };
    if (isScalar(node)) {
      const v = node.value;
      if (typeof v === 'string' && UNSTORABLE.test(v)) {
        throw new CiConfigError('(<unknown>): the document contains a NUL character or an unpaired surrogate (\\u0000, \\ud800…), which a build cannot hold');
      }
      size += typeof v === 'string' ? v.length : String(v).length;
    } else if (isMap(node) || isSeq(node)) {
      for (const item of node.items as unknown[]) {
        if (isPair(item)) {
          // a symbol key (`:a:`) is the text it was written as, as before (a JS object key is a string)
          if (isScalar(item.key) && item.key.value instanceof RubySymbol) item.key.value = item.key.value.source;
          add(item.key);
          add(item.value);
        } else add(item);
      }
    }
    if (size > MAX_EXPANDED_SIZE) throw tooLarge();
    const m = { size, height };
    if (anchor) {
      open.delete(node);
      measured.set(node, m);
    }
    return m;
  };
  walk(doc.contents, 0);
}

/**
 * The tokens of `source`, refusing flow collections (`[`, `{`) nested deeper than MAX_DEPTH as they
 * come: YAML's parser spends seconds on a megabyte of `[[[[…` before its composer overflows the stack.
 */
function* tokens(source: string) {
  const parser = new Parser();
  let flow = 0;
  for (const lexeme of new Lexer().lex(source)) {
    if (lexeme === '[' || lexeme === '{') {
      if (++flow > MAX_DEPTH) throw new CiConfigError(TOO_DEEP);
    } else if (lexeme === ']' || lexeme === '}') flow = Math.max(0, flow - 1);
    yield* parser.next(lexeme);
  }
  yield* parser.end();
}

/**
 * A Ruby symbol: a plain (unquoted) scalar `:name` or `:"name"`, which GitLab's loader reads
 * (`YAML.safe_load(config, [Symbol])`, Psych's ScalarScanner: /^:./). A quoted `":name"` is a string.
 */
class RubySymbol {
  constructor(readonly source: string) {}
  /** The symbol's name, as Ruby interpolates it (`"#{:build1}"` is `build1`). */
  get name(): string {
    // Psych: string =~ /^:(["'])(.*)\1/ ? $2.sub(/^:/, '') : string.sub(/^:/, '')
    const quoted = /^:(["'])(.*)\1/.exec(this.source);
    return quoted ? quoted[2].replace(/^:/, '') : this.source.slice(1);
  }
  toString(): string {
    return this.source;
  }
}

const rubySymbolTag: ScalarTag = {
  tag: 'tag:gitlab.com,2017:ruby/symbol',
  default: true,
  test: /^:./,
  identify: (v) => v instanceof RubySymbol,
  resolve: (source) => new RubySymbol(source),
};

/**
 * Where GitLab 8.17 takes a symbol for a job's name (`dependencies: [:build1]`: `@jobs[dependency.to_sym]`),
 * the symbol's name; every other symbol stays the text it was written as (`:x`), a string as before.
 */
function resolveSymbols(data: unknown): unknown {
  if (isObj(data)) {
    for (const job of Object.values(data)) {
      if (isObj(job) && Array.isArray(job.dependencies)) {
        // a new list: an aliased list used elsewhere keeps its own meaning there
        job.dependencies = job.dependencies.map((d: unknown) => (d instanceof RubySymbol ? d.name : d));
      }
    }
  }
  const seen = new Set<object>();
  const walk = (v: unknown): unknown => {
    if (v instanceof RubySymbol) return v.source;
    if (typeof v !== 'object' || v === null || seen.has(v)) return v;
    seen.add(v);
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
    else for (const [k, x] of Object.entries(v)) (v as Obj)[k] = walk(x);
    return v;
  };
  return walk(data);
}

/** Parses YAML text to plain data, safely. Errors read like Psych's ("(<unknown>): ..."). */
export function loadYaml(content: string): unknown {
  return load(content).data;
}

/**
 * The top-level keys that are not strings in the YAML (`10:`, `1.5:`, `true:`), by the name the
 * plain data gives them: GitLab 8.17 keeps such a key as a number (`deep_symbolize_keys` cannot make
 * it a symbol) and refuses it as a job name.
 */
function nonStringKeys(doc: Document): Set<string> {
  const keys = new Set<string>();
  if (!isMap(doc.contents)) return keys;
  for (const pair of doc.contents.items) {
    const key = pair.key;
    if (isScalar(key) && (typeof key.value === 'number' || typeof key.value === 'boolean' || typeof key.value === 'bigint')) {
      keys.add(String(key.value));
    }
  }
  return keys;
}

function load(content: string): { data: unknown; nonStringKeys: Set<string> } {
  if (Buffer.byteLength(content, 'utf8') > MAX_CONFIG_BYTES) {
    throw new CiConfigError(`The .gitlab-ci.yml is larger than ${MAX_CONFIG_BYTES / MB} MB`);
  }
  try {
    // YAML.parseDocument, with the nesting checked while lexing
    let doc: Document.Parsed | undefined;
    for (const d of new Composer({ schema: 'core', customTags: [rubySymbolTag], uniqueKeys: false, merge: true }).compose(
      tokens(content),
      true,
      content.length,
    )) {
      if (doc) throw new Error('Source contains multiple documents; please use YAML.parseAllDocuments()');
      doc = d;
    }
    if (!doc) throw new Error('empty document');
    if (doc.errors.length > 0) throw doc.errors[0];
    measure(doc);
    // aliases resolve to the object of their anchor (shared, not copied); measure() bounded the rest
    return { data: resolveSymbols(doc.toJS({ maxAliasCount: -1 })), nonStringKeys: nonStringKeys(doc) };
  } catch (e) {
    if (e instanceof CiConfigError) throw e;
    if (e instanceof RangeError || (e instanceof Error && /call stack/i.test(e.message))) throw new CiConfigError(TOO_DEEP);
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new CiConfigError(`(<unknown>): ${msg}`);
  }
}

/**
 * The size of a plain value as MAX_EXPANDED_SIZE counts it (shared objects count each time they
 * occur, as they are written out). Bounded by measure(): depth ≤ MAX_DEPTH, total ≤ the expansion.
 */
function sizeOf(v: unknown): number {
  if (v === null || v === undefined) return 1;
  if (typeof v === 'string') return 1 + v.length;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return 1 + String(v).length;
  if (typeof v !== 'object') return 1;
  let size = 1;
  if (Array.isArray(v)) for (const x of v) size += sizeOf(x);
  else for (const [k, x] of Object.entries(v)) size += 1 + k.length + sizeOf(x);
  return size;
}

const shorten = (name: string) => (name.length > 60 ? `${name.slice(0, 60)}…` : name);

/** What the worker is asked: validate `content`; with `ref`, also plan the builds for that ref. */
export interface CiConfigRequest {
  content: string;
  /** The project's full path, for `only`/`except` patterns with `@namespace/project`. */
  path?: string;
  ref?: { name: string; tag: boolean; trigger: boolean };
}

/** A pipeline's builds for one ref: `builds[i]` are the builds of `stages[i]`, in the file's order. */
export interface CiPlan {
  stages: string[];
  builds: BuildAttributes[][];
}

/** The answer: valid (with the plan when a ref was given), or GitLab's error text. */
export type CiConfigResult = { ok: true; plan?: CiPlan } | { ok: false; error: string };

/** The whole of what the worker thread does for one request; never throws CiConfigError. */
export function processCiConfig(req: CiConfigRequest): CiConfigResult {
  try {
    const config = new CiConfig(req.content, req.path);
    if (!req.ref) return { ok: true };
    return { ok: true, plan: config.plan(req.ref.name, req.ref.tag, req.ref.trigger) };
  } catch (e) {
    if (e instanceof CiConfigError) return { ok: false, error: e.message };
    throw e;
  }
}

/** A validated `.gitlab-ci.yml`. */
export class CiConfig {
  readonly stages: string[];
  /** Each stage's index in `stages` (its first occurrence, as GitLab's `stages.index`). */
  private readonly stageIndex = new Map<string, number>();
  private readonly jobs = new Map<string, Job>();
  private readonly beforeScript: string[];
  private readonly afterScript?: string[];
  private readonly image?: string;
  private readonly services?: string[];
  private readonly variables: Record<string, string>;
  private readonly cache?: Obj;
  private globalYamlVariables?: YamlVariable[];

  /** Throws CiConfigError with GitLab's message when the file is invalid. */
  constructor(
    content: string,
    readonly path?: string,
  ) {
    if (!content || !content.trim()) throw new CiConfigError('Please provide content of .gitlab-ci.yml');
    const { data: config, nonStringKeys } = load(content);
    if (!isObj(config)) throw new CiConfigError('YAML should be a hash');

    this.beforeScript = (config.before_script ?? []) as string[];
    this.afterScript = config.after_script as string[] | undefined;
    this.image = config.image as string | undefined;
    this.services = config.services as string[] | undefined;
    const stages = config.stages ?? config.types;
    this.variables = (config.variables ?? {}) as Record<string, string>;
    this.cache = config.cache as Obj | undefined;

    for (const [name, job] of Object.entries(config)) {
      if (GLOBAL_KEYS.includes(name) || name.startsWith('.')) continue;
      if (name.length > MAX_NAME_LENGTH) {
        throw new CiConfigError(`jobs:${shorten(name)} name is too long (maximum is ${MAX_NAME_LENGTH} characters)`);
      }
      // a key that is neither global nor a hash is an unknown parameter (GitLab 8.8); a hash is a job,
      // which needs a `script` (GitLab 8.11+'s message: 8.8 called that an unknown parameter too)
      if (!isObj(job)) throw new CiConfigError(`Unknown parameter: ${name}`);
      if (!('script' in job)) throw new CiConfigError(`jobs:${name} script can't be blank`);
      // GitLab 8.17's Job entry: `validates :name, type: Symbol` (an integer key stays an Integer)
      if (nonStringKeys.has(name)) throw new CiConfigError(`jobs:${name} name should be a symbol`);
      const stage = (job.stage ?? job.type ?? DEFAULT_STAGE) as string;
      this.jobs.set(name, { name, stage, raw: job });
      if (this.jobs.size > MAX_JOBS) throw new CiConfigError(`The .gitlab-ci.yml defines more than ${MAX_JOBS} jobs`);
    }
    if (this.jobs.size === 0) throw new CiConfigError('Please define at least one job');

    this.validateGlobal(stages);
    this.stages = (stages as string[] | undefined) ?? DEFAULT_STAGES;
    this.stages.forEach((s, i) => this.stageIndex.has(s) || this.stageIndex.set(s, i));
    for (const job of this.jobs.values()) this.validateJob(job);
    this.checkBuildsSize();
  }

  /** GitLab's `validation_message`: the error text, or null when the file is valid. */
  static validationMessage(content: string): string | null {
    try {
      new CiConfig(content);
      return null;
    } catch (e) {
      if (e instanceof CiConfigError) return e.message;
      throw e;
    }
  }

  jobNames(): string[] {
    return [...this.jobs.keys()];
  }

  /** Builds of every job that runs for this ref. */
  buildsForRef(ref: string, tag = false, trigger = false): BuildAttributes[] {
    const matches = new Map<string, boolean>(); // one evaluation per distinct pattern
    return [...this.jobs.values()].filter((j) => this.process(j, ref, tag, trigger, matches)).map((j) => this.buildAttributes(j));
  }

  buildsForStageAndRef(stage: string, ref: string, tag = false, trigger = false): BuildAttributes[] {
    return this.buildsForRef(ref, tag, trigger).filter((b) => b.stage === stage);
  }

  /** The builds for this ref grouped by stage, in one pass over the jobs. */
  plan(ref: string, tag = false, trigger = false): CiPlan {
    const builds: BuildAttributes[][] = this.stages.map(() => []);
    for (const b of this.buildsForRef(ref, tag, trigger)) builds[b.stageIdx]?.push(b);
    return { stages: [...this.stages], builds };
  }

  /**
   * Refuses a file whose builds would be too large together: each build carries its own keys and
   * the global ones it does not override (linear: the globals are measured once).
   */
  private checkBuildsSize(): void {
    const global = {
      before_script: sizeOf(this.beforeScript),
      after_script: sizeOf(this.afterScript),
      image: sizeOf(this.image),
      services: sizeOf(this.services),
      cache: sizeOf(this.cache),
      variables: sizeOf(this.variables),
    };
    let total = 0;
    for (const job of this.jobs.values()) {
      total += sizeOf(job.raw);
      for (const [key, size] of Object.entries(global)) if (!present(job.raw[key]) || key === 'variables') total += size;
      if (total > MAX_BUILDS_SIZE) {
        throw new CiConfigError(
          `The .gitlab-ci.yml makes builds of more than ${MAX_BUILDS_SIZE / MB} MB in all (the global before_script, variables, cache… are copied into every job)`,
        );
      }
    }
  }

  private buildAttributes(job: Job): BuildAttributes {
    const j = job.raw;
    const before = (j.before_script as string[] | undefined) ?? this.beforeScript;
    const script = isStr(j.script) ? [j.script] : (j.script as string[]);
    const options: JobOptions = {};
    const image = (j.image as string | undefined) ?? this.image;
    const services = (j.services as string[] | undefined) ?? this.services;
    const cache = (j.cache as Obj | undefined) ?? this.cache;
    const after = (j.after_script as string[] | undefined) ?? this.afterScript;
    if (present(image)) options.image = image;
    if (present(services)) options.services = services;
    if (present(j.artifacts)) options.artifacts = j.artifacts as Obj;
    if (present(cache)) options.cache = cache;
    if (present(j.dependencies)) options.dependencies = j.dependencies as string[];
    if (present(after)) options.after_script = after;
    const own = j.variables as Record<string, string> | null | undefined;
    const toYaml = (vars: Record<string, string>) => Object.entries(vars).map(([key, value]) => ({ key, value, public: true }));
    // the global variables alone are listed once and shared by the builds that add none
    const yamlVariables = own && Object.keys(own).length > 0 ? toYaml({ ...this.variables, ...own }) : (this.globalYamlVariables ??= toYaml(this.variables));
    return {
      name: job.name,
      stage: job.stage,
      stageIdx: this.stageIndex.get(job.stage) ?? -1,
      commands: [...before, ...script].join('\n'),
      tagList: (j.tags as string[] | undefined) ?? [],
      allowFailure: j.allow_failure === true,
      when: (j.when as When | undefined) ?? 'on_success',
      yamlVariables,
      options,
    };
  }

  private process(job: Job, ref: string, tag: boolean, trigger: boolean, matches: Map<string, boolean>): boolean {
    const only = job.raw.only as string[] | undefined;
    const except = job.raw.except as string[] | undefined;
    const match = (p: string) => {
      let m = matches.get(p);
      if (m === undefined) matches.set(p, (m = this.matchRef(p, ref, tag, trigger)));
      return m;
    };
    if (only && only.length > 0 && !only.some(match)) return false;
    if (except && except.length > 0 && except.some(match)) return false;
    return true;
  }

  private matchRef(spec: string, ref: string, tag: boolean, trigger: boolean): boolean {
    const at = spec.indexOf('@');
    const pattern = at === -1 ? spec : spec.slice(0, at);
    const path = at === -1 ? undefined : spec.slice(at + 1);
    if (path !== undefined && path !== this.path) return false;
    if (tag && pattern === 'tags') return true;
    if (!tag && pattern === 'branches') return true;
    if (trigger && pattern === 'triggers') return true;
    if (pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
      return testRegex(pattern.slice(1, -1), ref);
    }
    return pattern === ref;
  }

  private validateGlobal(stages: unknown): void {
    if (!isStrArray(this.beforeScript)) throw new CiConfigError('before_script should be an array of strings');
    if (this.afterScript !== undefined && this.afterScript !== null && !isStrArray(this.afterScript)) {
      throw new CiConfigError('after_script should be an array of strings');
    }
    if (this.image !== undefined && this.image !== null && !isStr(this.image)) throw new CiConfigError('image should be a string');
    if (this.services !== undefined && this.services !== null && !isStrArray(this.services)) {
      throw new CiConfigError('services should be an array of strings');
    }
    if (stages !== undefined && stages !== null) {
      if (!isStrArray(stages)) throw new CiConfigError('stages should be an array of strings');
      if (stages.length > MAX_STAGES) throw new CiConfigError(`The .gitlab-ci.yml defines more than ${MAX_STAGES} stages`);
      const long = stages.find((s) => s.length > MAX_NAME_LENGTH);
      if (long !== undefined) throw new CiConfigError(`stages: ${shorten(long)} is too long (maximum is ${MAX_NAME_LENGTH} characters)`);
    }
    if (this.variables !== null && !isVariables(this.variables)) throw new CiConfigError('variables should be a map of key-value strings');
    if (present(this.cache)) this.validateCache('', this.cache);
  }

  private validateCache(prefix: string, cache: unknown): void {
    if (!isObj(cache)) throw new CiConfigError(`${prefix}cache should be a hash`);
    for (const key of Object.keys(cache)) {
      if (!CACHE_KEYS.includes(key)) throw new CiConfigError(`${prefix}cache unknown parameter ${key}`);
    }
    if (present(cache.key) && !isStr(cache.key)) throw new CiConfigError(`${prefix}cache:key parameter should be a string`);
    if (present(cache.untracked) && !isBool(cache.untracked)) {
      throw new CiConfigError(`${prefix}cache:untracked parameter should be an boolean`);
    }
    if (present(cache.paths) && !isStrArray(cache.paths)) {
      throw new CiConfigError(`${prefix}cache:paths parameter should be an array of strings`);
    }
  }

  private validateJob(job: Job): void {
    const { name, raw: j } = job;
    const p = `${name} job: `;
    if (!name) throw new CiConfigError('job name should be non-empty string');
    for (const key of Object.keys(j)) {
      if (!JOB_KEYS.includes(key)) throw new CiConfigError(`${p}unknown parameter ${key}`);
    }
    if (!isStr(j.script) && !isStrArray(j.script)) throw new CiConfigError(`${p}script should be a string or an array of a strings`);
    if (present(j.before_script) && !isStrArray(j.before_script)) throw new CiConfigError(`${p}before_script should be an array of strings`);
    if (present(j.after_script) && !isStrArray(j.after_script)) throw new CiConfigError(`${p}after_script should be an array of strings`);
    if (present(j.image) && !isStr(j.image)) throw new CiConfigError(`${p}image should be a string`);
    if (present(j.services) && !isStrArray(j.services)) throw new CiConfigError(`${p}services should be an array of strings`);
    if (present(j.tags) && !isStrArray(j.tags)) throw new CiConfigError(`${p}tags parameter should be an array of strings`);
    for (const key of ['only', 'except'] as const) {
      if (!present(j[key])) continue;
      if (!isStrArray(j[key])) throw new CiConfigError(`${p}${key} parameter should be an array of strings`);
      for (const spec of j[key]) this.validatePattern(p, key, spec);
    }
    if (present(j.allow_failure) && !isBool(j.allow_failure)) throw new CiConfigError(`${p}allow_failure parameter should be an boolean`);
    if (present(j.when) && !WHEN.includes(j.when as string)) {
      throw new CiConfigError(`${p}when parameter should be on_success, on_failure or always`);
    }
    // the stage a job runs in, given or the default `test`, must be one of `stages` (8.17: the Stage
    // entry's default is `test`; a job on it when `stages:` omits `test` is refused, never dropped)
    if (!isStr(job.stage) || !this.stageIndex.has(job.stage)) {
      throw new CiConfigError(`${p}stage parameter should be ${this.stages.join(', ')}`);
    }
    if (present(j.variables) && !isVariables(j.variables)) throw new CiConfigError(`${p}variables should be a map of key-value strings`);
    if (present(j.cache)) this.validateCache(p, j.cache);
    if (present(j.artifacts)) this.validateArtifacts(p, j.artifacts);
    if (present(j.dependencies)) {
      if (!isStrArray(j.dependencies)) throw new CiConfigError(`${p}dependencies parameter should be an array of strings`);
      const idx = this.stageIndex.get(job.stage) ?? -1;
      for (const dep of j.dependencies) {
        const other = this.jobs.get(dep);
        if (!other) throw new CiConfigError(`${p}undefined dependency: ${dep}`);
        if (!((this.stageIndex.get(other.stage) ?? -1) < idx)) throw new CiConfigError(`${p}dependency ${dep} is not defined in prior stages`);
      }
    }
  }

  private validatePattern(p: string, key: string, spec: string): void {
    const pattern = spec.split('@')[0];
    if (!(pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/'))) return;
    const source = pattern.slice(1, -1);
    if (source.length > MAX_REGEX_LENGTH) {
      throw new CiConfigError(`${p}${key} parameter regexp is longer than ${MAX_REGEX_LENGTH} characters`);
    }
    try {
      new RegExp(source);
    } catch {
      throw new CiConfigError(`${p}${key} parameter contains an invalid regexp ${pattern}`);
    }
  }

  private validateArtifacts(p: string, a: unknown): void {
    if (!isObj(a)) throw new CiConfigError(`${p}artifacts should be a hash`);
    for (const key of Object.keys(a)) {
      if (!ARTIFACTS_KEYS.includes(key)) throw new CiConfigError(`${p}artifacts unknown parameter ${key}`);
    }
    if (present(a.name) && !isStr(a.name)) throw new CiConfigError(`${p}artifacts:name parameter should be a string`);
    if (present(a.untracked) && !isBool(a.untracked)) throw new CiConfigError(`${p}artifacts:untracked parameter should be an boolean`);
    if (present(a.paths) && !isStrArray(a.paths)) throw new CiConfigError(`${p}artifacts:paths parameter should be an array of strings`);
    if (present(a.when) && !WHEN.includes(a.when as string)) {
      throw new CiConfigError(`${p}artifacts:when parameter should be on_success, on_failure or always`);
    }
    if (present(a.expire_in) && !(isStr(a.expire_in) && parseDuration(a.expire_in) !== undefined)) {
      throw new CiConfigError(`${p}artifacts:expire_in parameter should be a duration`);
    }
  }
}
