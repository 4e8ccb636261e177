import { Script, createContext } from 'node:vm';
import { parseDocument } from 'yaml';

/**
 * `.gitlab-ci.yml` → jobs, with GitLab 8.8's semantics and error texts (`Ci::GitlabCiYamlProcessor`).
 * Pure: no I/O. Parsing is YAML 1.2 core schema (no custom tags, no code), with limits on the document
 * size, alias expansion and nesting, so a hostile file is an error and never an outage. `/regex/`
 * patterns of `only`/`except` are length-bounded and evaluated with a time limit.
 */

export class CiConfigError extends Error {}

export const DEFAULT_STAGES = ['build', 'test', 'deploy'];
const DEFAULT_STAGE = 'test';
export const MAX_CONFIG_BYTES = 1024 * 1024;
const MAX_ALIAS_COUNT = 200;
const MAX_DEPTH = 64;
const MAX_REGEX_LENGTH = 256;
const REGEX_TIMEOUT_MS = 50;

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

export type When = 'on_success' | 'on_failure' | 'always';

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

function depthOf(v: unknown, depth = 0): number {
  if (depth > MAX_DEPTH) return depth;
  if (Array.isArray(v)) return Math.max(depth, ...v.map((x) => depthOf(x, depth + 1)));
  if (isObj(v)) return Math.max(depth, ...Object.values(v).map((x) => depthOf(x, depth + 1)));
  return depth;
}

/** Parses YAML text to plain data, safely. Errors read like Psych's ("(<unknown>): ..."). */
export function loadYaml(content: string): unknown {
  if (Buffer.byteLength(content, 'utf8') > MAX_CONFIG_BYTES) {
    throw new CiConfigError(`The .gitlab-ci.yml is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB`);
  }
  let value: unknown;
  try {
    const doc = parseDocument(content, { schema: 'core', uniqueKeys: false, prettyErrors: false, merge: true });
    if (doc.errors.length > 0) throw doc.errors[0];
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    if (/alias/i.test(msg) && /excessive|resource/i.test(msg)) {
      throw new CiConfigError('(<unknown>): too many aliases (possible billion laughs attack)');
    }
    if (e instanceof RangeError) throw new CiConfigError('(<unknown>): the document is nested too deeply');
    throw new CiConfigError(`(<unknown>): ${msg}`);
  }
  if (depthOf(value) > MAX_DEPTH) throw new CiConfigError('(<unknown>): the document is nested too deeply');
  return value;
}

/** A validated `.gitlab-ci.yml`. */
export class CiConfig {
  readonly stages: string[];
  private readonly jobs = new Map<string, Job>();
  private readonly beforeScript: string[];
  private readonly afterScript?: string[];
  private readonly image?: string;
  private readonly services?: string[];
  private readonly variables: Record<string, string>;
  private readonly cache?: Obj;

  /** Throws CiConfigError with GitLab's message when the file is invalid. */
  constructor(
    content: string,
    readonly path?: string,
  ) {
    if (!content || !content.trim()) throw new CiConfigError('Please provide content of .gitlab-ci.yml');
    const config = loadYaml(content);
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
      // a key that is neither global nor a hash is an unknown parameter (GitLab 8.8); a hash is a job,
      // which needs a `script` (GitLab 8.11+'s message: 8.8 called that an unknown parameter too)
      if (!isObj(job)) throw new CiConfigError(`Unknown parameter: ${name}`);
      if (!('script' in job)) throw new CiConfigError(`jobs:${name} script can't be blank`);
      const stage = (job.stage ?? job.type ?? DEFAULT_STAGE) as string;
      this.jobs.set(name, { name, stage, raw: job });
    }
    if (this.jobs.size === 0) throw new CiConfigError('Please define at least one job');

    this.validateGlobal(stages);
    this.stages = (stages as string[] | undefined) ?? DEFAULT_STAGES;
    for (const job of this.jobs.values()) this.validateJob(job);
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
    return [...this.jobs.values()].filter((j) => this.process(j, ref, tag, trigger)).map((j) => this.buildAttributes(j));
  }

  buildsForStageAndRef(stage: string, ref: string, tag = false, trigger = false): BuildAttributes[] {
    return this.buildsForRef(ref, tag, trigger).filter((b) => b.stage === stage);
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
    const vars = { ...this.variables, ...((j.variables as Record<string, string> | undefined) ?? {}) };
    return {
      name: job.name,
      stage: job.stage,
      stageIdx: this.stages.indexOf(job.stage),
      commands: [...before, ...script].join('\n'),
      tagList: (j.tags as string[] | undefined) ?? [],
      allowFailure: j.allow_failure === true,
      when: (j.when as When | undefined) ?? 'on_success',
      yamlVariables: Object.entries(vars).map(([key, value]) => ({ key, value, public: true })),
      options,
    };
  }

  private process(job: Job, ref: string, tag: boolean, trigger: boolean): boolean {
    const only = job.raw.only as string[] | undefined;
    const except = job.raw.except as string[] | undefined;
    if (only && only.length > 0 && !only.some((p) => this.matchRef(p, ref, tag, trigger))) return false;
    if (except && except.length > 0 && except.some((p) => this.matchRef(p, ref, tag, trigger))) return false;
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
    if (stages !== undefined && stages !== null && !isStrArray(stages)) throw new CiConfigError('stages should be an array of strings');
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
    if (present(j.stage ?? j.type)) {
      if (!isStr(job.stage) || !this.stages.includes(job.stage)) {
        throw new CiConfigError(`${p}stage parameter should be ${this.stages.join(', ')}`);
      }
    }
    if (present(j.variables) && !isVariables(j.variables)) throw new CiConfigError(`${p}variables should be a map of key-value strings`);
    if (present(j.cache)) this.validateCache(p, j.cache);
    if (present(j.artifacts)) this.validateArtifacts(p, j.artifacts);
    if (present(j.dependencies)) {
      if (!isStrArray(j.dependencies)) throw new CiConfigError(`${p}dependencies parameter should be an array of strings`);
      const idx = this.stages.indexOf(job.stage);
      for (const dep of j.dependencies) {
        const other = this.jobs.get(dep);
        if (!other) throw new CiConfigError(`${p}undefined dependency: ${dep}`);
        if (!(this.stages.indexOf(other.stage) < idx)) throw new CiConfigError(`${p}dependency ${dep} is not defined in prior stages`);
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
