import { Script, createContext } from 'node:vm';
import { Composer, Document, isAlias, isMap, isPair, isScalar, isSeq, Lexer, Parser, type ScalarTag, type Tags, YAMLError } from 'yaml';

/**
 * `.gitlab-ci.yml` → jobs, with GitLab 8.17's grammar and error texts (`Ci::GitlabCiYamlProcessor` and
 * its `Gitlab::Ci::Config::Entry` tree: see `CiConfig`).
 * Pure: no I/O. The server runs it in a worker thread with a time budget (`ci-config-workers.ts`:
 * `processCiConfig` below is the whole of what the worker does), and the work is linear in the
 * file's size once its aliases are resolved: jobs are grouped by stage once, stages are looked up in
 * a map, never a stage × job loop.
 *
 * Parsing is YAML 1.2's core schema with Psych's booleans (`yes`/`no`/`on`/`off`) and Ruby symbols (`:name`),
 * as GitLab's loader reads them (no other custom tags, no code). GitLab 8.17 capped none of this (its
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

/** GitLab 8.17's Global entry: these keys configure the pipeline; every other top-level key is a job. */
const GLOBAL_KEYS = ['before_script', 'image', 'services', 'after_script', 'variables', 'stages', 'types', 'cache'];
/** 8.17's `Job::ALLOWED_KEYS`, in its order. */
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
  'environment',
  'coverage',
];
const CACHE_KEYS = ['key', 'untracked', 'paths'];
const ARTIFACTS_KEYS = ['name', 'untracked', 'paths', 'when', 'expire_in'];
const ENVIRONMENT_KEYS = ['name', 'url', 'action', 'on_stop'];
const JOB_WHEN = ['on_success', 'on_failure', 'always', 'manual'];
const ARTIFACTS_WHEN = ['on_success', 'on_failure', 'always'];
/** The keys a job takes from the global ones when it does not give its own (8.17's `Job#inherit!`). */
const INHERITED = ['before_script', 'image', 'services', 'after_script', 'variables', 'cache'] as const;
/** GitLab 8.17's `Gitlab::Regex.environment_name_regex` and its message. */
const ENVIRONMENT_NAME = /^[a-zA-Z0-9_\\/${}. -]+$/;
const ENVIRONMENT_NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces";

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
  /** The stage as given (`stage`, else `type`, else `test`); a valid file's is one of `stages`. */
  stage: string;
  raw: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
/** 8.17's `validate_array_of_strings` (a Ruby symbol is a string here: the text it was written as). */
const isStrArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr);
const isBool = (v: unknown): v is boolean => v === true || v === false;
/** 8.17's `validate_variables`: a hash of string keys and string values. */
const isVariables = (v: unknown): v is Record<string, string> =>
  isObj(v) && Object.values(v).every(isStr) && Object.keys(v).every((k) => !k.startsWith('\u0000'));
/** Given: 8.17's entry factory takes a nil (or absent) value as unspecified, and anything else, `false` too, as given. */
const given = (v: unknown) => v !== undefined && v !== null;
/** Rails' `blank?`: nil, false, a string of white space, an empty array or hash. */
const blank = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === false ||
  (typeof v === 'string' && /^\s*$/.test(v)) ||
  (Array.isArray(v) && v.length === 0) ||
  (isObj(v) && Object.keys(v).length === 0);
/** Ruby 2.3's `String#downcase` (ASCII letters only), which 8.17's entry messages go through. */
const downcase = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
/** `/…/`, as 8.17 tells a regexp from a string (`value.first == '/' && value.last == '/'`). */
const looksLikeRegexp = (v: string) => v.startsWith('/') && v.endsWith('/');

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

/**
 * A Ruby regexp's source (what GitLab 8.17 gives `Regexp.new`) as a JavaScript RegExp with Ruby's
 * meaning where the two differ in what `.gitlab-ci.yml` files write: `^` and `$` match at each line's
 * ends (the `m` flag), `\A`, `\z` and `\Z` at the ends of the text, `\h` and `\H` a hex digit or not.
 * Throws a SyntaxError for a source that is no regexp.
 */
export function rubyRegExp(source: string): RegExp {
  let out = '';
  let inClass = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\' && i + 1 < source.length) {
      const n = source[++i];
      if (n === 'h') out += inClass ? '0-9a-fA-F' : '[0-9a-fA-F]';
      else if (n === 'H' && !inClass) out += '[^0-9a-fA-F]';
      else if (n === 'A' && !inClass) out += '(?<![\\s\\S])';
      else if (n === 'z' && !inClass) out += '(?![\\s\\S])';
      else if (n === 'Z' && !inClass) out += '(?=\\n?(?![\\s\\S]))';
      else out += c + n;
      continue;
    }
    if (c === '[') inClass++;
    else if (c === ']' && inClass > 0) inClass--;
    out += c;
  }
  return new RegExp(out, 'm');
}

/** Whether `source` is a regexp GitLab would compile (and this server can evaluate). */
function validRegexp(source: string): boolean {
  try {
    rubyRegExp(source);
    return true;
  } catch {
    return false;
  }
}

function testRegex(source: string, ref: string): boolean {
  let re: RegExp;
  try {
    re = rubyRegExp(source);
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
/** The mark of a hash key that YAML reads as no string (`1:`, `true:`): NUL, which no scalar of a valid file has. */
const NON_STRING_KEY = '\u0000';
/** A key as 8.17 prints it (`1`, not the mark). */
const keyName = (k: string) => (k.startsWith(NON_STRING_KEY) ? k.slice(1) : k);
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
          // a symbol key (`:a:`) is its name, as 8.17's `deep_symbolize_keys` makes `a:` and `:a:` one key
          // (Ruby's `YAML.dump` of a hash of symbols writes `:rspec:` and `:script:`)
          if (isScalar(item.key) && item.key.value instanceof RubySymbol) item.key.value = item.key.value.name;
          add(item.key);
          // a key that is no string (`1:`, `true:`, `~:`) in a nested hash is marked, so that the checks of
          // string keys (8.17's variables) see it (the top level's are the job names: nonStringKeys)
          if (depth > 0 && isScalar(item.key) && typeof item.key.value !== 'string') {
            const v = item.key.value;
            item.key.value = NON_STRING_KEY + (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : '');
          }
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
 * Booleans as GitLab 8.17's YAML (Psych, YAML 1.1) reads them: `true`/`false`, `yes`/`no`, `on`/`off`, in
 * any case (`allow_failure: yes` is true; `variables: {DEBUG: on}` a boolean, which 8.17 refused as a
 * variable). `y` and `n` stay strings, as in Psych. Replaces the core schema's `true`/`false`.
 */
const psychBoolTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:bool',
  default: true,
  test: /^(?:[Yy][Ee][Ss]|[Tt][Rr][Uu][Ee]|[Oo][Nn]|[Nn][Oo]|[Ff][Aa][Ll][Ss][Ee]|[Oo][Ff][Ff])$/,
  identify: (v) => typeof v === 'boolean',
  resolve: (source) => /^(?:yes|true|on)$/i.test(source),
};

/** The core schema, with Psych's booleans and Ruby symbols. */
const schemaTags = (tags: Tags): Tags => [...tags.map((t) => (typeof t === 'object' && t.tag === 'tag:yaml.org,2002:bool' ? psychBoolTag : t)), rubySymbolTag];

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

/**
 * The top-level keys in the file's order (a JS object lists integer-like keys, a quoted `"10":`, first):
 * GitLab 8.17's jobs keep the order they are written in. Keys a merge (`<<:`) brings come last.
 */
function fileOrder(doc: Document, data: unknown): string[] {
  if (!isObj(data)) return [];
  const order = new Set<string>();
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      const v: unknown = isScalar(pair.key) ? pair.key.value : undefined;
      const key =
        typeof v === 'string' ? v : v === null ? '' : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : undefined;
      if (key !== undefined && Object.hasOwn(data, key)) order.add(key);
    }
  }
  for (const key of Object.keys(data)) order.add(key);
  return [...order];
}

/** ` at line L column C` (1-based) of an offset in `content`. */
function position(content: string, offset: number): string {
  if (!Number.isInteger(offset) || offset < 0) return '';
  const before = content.slice(0, Math.min(offset, content.length));
  const line = before.split('\n').length;
  return ` at line ${line} column ${before.length - before.lastIndexOf('\n')}`;
}

function load(content: string): { data: unknown; nonStringKeys: Set<string>; order: string[] } {
  if (Buffer.byteLength(content, 'utf8') > MAX_CONFIG_BYTES) {
    throw new CiConfigError(`The .gitlab-ci.yml is larger than ${MAX_CONFIG_BYTES / MB} MB`);
  }
  try {
    // YAML.parseDocument, with the nesting checked while lexing
    let doc: Document.Parsed | undefined;
    for (const d of new Composer({ schema: 'core', customTags: schemaTags, uniqueKeys: false, merge: true }).compose(tokens(content), true, content.length)) {
      if (doc) throw new Error('Source contains multiple documents; please use YAML.parseAllDocuments()');
      doc = d;
    }
    if (!doc) throw new Error('empty document');
    if (doc.errors.length > 0) throw doc.errors[0];
    measure(doc);
    // aliases resolve to the object of their anchor (shared, not copied); measure() bounded the rest
    const data = resolveSymbols(doc.toJS({ maxAliasCount: -1 }));
    return { data, nonStringKeys: nonStringKeys(doc), order: fileOrder(doc, data) };
  } catch (e) {
    if (e instanceof CiConfigError) throw e;
    if (e instanceof RangeError || (e instanceof Error && /call stack/i.test(e.message))) throw new CiConfigError(TOO_DEEP);
    const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
    // where, as Psych says it ("… at line 1 column 14")
    const at = e instanceof YAMLError && !/ at line \d/.test(msg) ? position(content, e.pos[0]) : '';
    throw new CiConfigError(`(<unknown>): ${msg}${at}`);
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
  /** Every error the file has (`CiConfig.allErrors`: a push's `remote:` lines), not only GitLab's first; no plan. */
  all?: boolean;
}

/** A pipeline's builds for one ref: `builds[i]` are the builds of `stages[i]`, in the file's order. */
export interface CiPlan {
  stages: string[];
  builds: BuildAttributes[][];
}

/** The answer: valid (with the plan when a ref was given), or GitLab's error text (and, asked for `all`, every error). */
export type CiConfigResult = { ok: true; plan?: CiPlan } | { ok: false; error: string; errors?: string[] };

/** The whole of what the worker thread does for one request; never throws CiConfigError. */
export function processCiConfig(req: CiConfigRequest): CiConfigResult {
  try {
    if (req.all) {
      const errors = CiConfig.allErrors(req.content, req.path);
      return errors.length > 0 ? { ok: false, error: errors[0], errors } : { ok: true };
    }
    if (!req.ref) {
      const error = CiConfig.validationMessage(req.content);
      return error === null ? { ok: true } : { ok: false, error };
    }
    const config = new CiConfig(req.content, req.path);
    return { ok: true, plan: config.plan(req.ref.name, req.ref.tag, req.ref.trigger) };
  } catch (e) {
    if (e instanceof CiConfigError) return { ok: false, error: e.message };
    throw e;
  }
}

/** At most this many errors are listed by `CiConfig.allErrors` (a last line says how many more). */
export const MAX_LISTED_ERRORS = 50;

/**
 * Where the checks' errors go: the first one ends the check (GitLab 8.17's answer: its processor
 * raises `errors.first`), or, for `all`, each is collected (once) and the check goes on where it can.
 */
class Errors {
  readonly list: string[] = [];
  private readonly seen = new Set<string>();
  private more = 0;

  constructor(readonly all: boolean) {}

  add(message: string): void {
    if (!this.all) throw new CiConfigError(message);
    if (this.seen.has(message)) return;
    this.seen.add(message);
    if (this.list.length < MAX_LISTED_ERRORS) this.list.push(message);
    else this.more++;
  }

  /**
   * An entry's error as 8.17's `Validator#messages` words it: the entry's location (`jobs:rspec:cache`),
   * the attribute (`config`, `name`, `expire in`…) and the message, downcased.
   */
  entry(location: string, message: string): void {
    this.add(downcase(`${location} ${message}`));
  }

  messages(): string[] {
    return this.more > 0 ? [...this.list, `… and ${this.more} more`] : this.list;
  }
}

/** A job's `environment` as 8.17 keeps it (`Entry::Environment#value`): a string is the name of a `start`. */
function environmentValue(env: unknown): JobEnvironment | undefined {
  if (isStr(env)) return { name: env, action: 'start' };
  if (isObj(env)) return env as unknown as JobEnvironment;
  return undefined;
}

/**
 * A validated `.gitlab-ci.yml`, with GitLab 8.17's grammar and error texts (`Ci::GitlabCiYamlProcessor`
 * over the `Gitlab::Ci::Config::Entry` tree). The checks run in 8.17's order, so that the first error
 * is 8.17's `errors.first`: the global entries (before_script, image, services, after_script,
 * variables, stages or types, cache and its keys), then `jobs` (at least one visible), then each job
 * in the file's order — its own attributes (config, script, name, tags, allow_failure, when,
 * dependencies), then its entries (before_script, script, stage or type, after_script, cache, image,
 * services, only, except, variables, artifacts, environment, coverage) — and once all of that is
 * valid, the processor's checks per job: its stage, its dependencies, its environment's `on_stop`.
 * This server's own limits (sizes, names, regexps) are checked along the way with their own texts.
 */
export class CiConfig {
  readonly stages: string[];
  /** Each stage's index in `stages` (its first occurrence, as GitLab's `stages.index`). */
  private readonly stageIndex = new Map<string, number>();
  private readonly jobs = new Map<string, Job>();
  private readonly global: Obj;
  private readonly variables: Record<string, string>;
  private globalYamlVariables?: YamlVariable[];

  /** Throws CiConfigError with GitLab's message when the file is invalid (with `check` collecting all: only when it cannot go on). */
  constructor(
    content: string,
    readonly path?: string,
    check = new Errors(false),
  ) {
    // 8.17's Loader: what YAML reads as anything but a hash (nothing, for an empty file) is refused
    if (!content || !content.trim()) throw new CiConfigError('Invalid configuration format');
    const { data: config, nonStringKeys, order } = load(content);
    if (!isObj(config)) throw new CiConfigError('Invalid configuration format');
    this.global = config;
    this.variables = isVariables(config.variables) ? config.variables : {};

    // the global entries
    this.checkScript('before_script', config.before_script, check);
    if (given(config.image) && !isStr(config.image)) check.entry('image', 'config should be a string');
    if (given(config.services) && !isStrArray(config.services)) check.entry('services', 'config should be an array of strings');
    this.checkScript('after_script', config.after_script, check);
    if (given(config.variables) && !isVariables(config.variables)) check.entry('variables', 'config should be a hash of key value pairs');
    // `types` is `stages` when `stages` is not given (8.17's compose_deprecated_entries!)
    const stagesKey = given(config.stages) ? 'stages' : given(config.types) ? 'types' : undefined;
    let stages = DEFAULT_STAGES;
    if (stagesKey) {
      const list = config[stagesKey];
      if (!isStrArray(list)) check.entry(stagesKey, 'config should be an array of strings');
      else {
        if (list.length > MAX_STAGES) check.add(`The .gitlab-ci.yml defines more than ${MAX_STAGES} stages`);
        const long = list.find((s) => s.length > MAX_NAME_LENGTH);
        if (long !== undefined) check.add(`stages: ${shorten(long)} is too long (maximum is ${MAX_NAME_LENGTH} characters)`);
        stages = list;
      }
    }
    if (given(config.cache)) this.checkCache('cache', config.cache, check);

    // the jobs: every other key, a job or (named `.…`) a hidden one
    const entries = order.filter((name) => !GLOBAL_KEYS.includes(name)).map((name) => [name, config[name]] as const);
    if (!entries.some(([name]) => !name.startsWith('.'))) check.entry('jobs', 'config should contain at least one visible job');
    for (const [name, value] of entries) {
      if (name.startsWith('.')) {
        // a hidden job (a template for anchors) is not a job: it only has to be something
        if (blank(value)) check.entry(`jobs:${name}`, "config can't be blank");
        continue;
      }
      if (name.length > MAX_NAME_LENGTH) {
        check.add(`jobs:${shorten(name)} name is too long (maximum is ${MAX_NAME_LENGTH} characters)`);
        continue;
      }
      const job = this.checkJob(name, value ?? {}, nonStringKeys.has(name), check);
      if (job) {
        this.jobs.set(name, job);
        if (this.jobs.size > MAX_JOBS) {
          check.add(`The .gitlab-ci.yml defines more than ${MAX_JOBS} jobs`);
          break;
        }
      }
    }

    this.stages = stages;
    this.stages.forEach((s, i) => this.stageIndex.has(s) || this.stageIndex.set(s, i));
    // the processor's own checks, once the entries are valid (collecting all: for what can be checked)
    if (check.all && stagesKey && !isStrArray(config[stagesKey])) return;
    for (const job of this.jobs.values()) this.checkJobLinks(job, check);
    this.checkBuildsSize(check);
  }

  /** GitLab's `validation_message` (`POST /ci/lint`): the error text, or null when the file is valid. */
  static validationMessage(content: string): string | null {
    if (!content || !content.trim()) return 'Please provide content of .gitlab-ci.yml';
    try {
      new CiConfig(content);
      return null;
    } catch (e) {
      if (e instanceof CiConfigError) return e.message;
      throw e;
    }
  }

  /**
   * Every error of the file (none when it is valid), each once, in the order GitLab 8.17 would find
   * them: where 8.17 stops at its first, this goes on — to every key of every job, and to each job's
   * stage, dependencies and environment links. A file that cannot be read (YAML, not a hash, a limit
   * on its size) has that one error. At most MAX_LISTED_ERRORS, then a line with how many more.
   */
  static allErrors(content: string, path?: string): string[] {
    const check = new Errors(true);
    try {
      new CiConfig(content, path, check);
    } catch (e) {
      if (!(e instanceof CiConfigError)) throw e;
      check.add(e.message);
    }
    return check.messages();
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

  /** A script entry (`before_script`, `after_script`): an array of strings. */
  private checkScript(location: string, v: unknown, check: Errors): void {
    if (given(v) && !isStrArray(v)) check.entry(location, 'config should be an array of strings');
  }

  /** 8.17's `Entry::Cache`: a hash of `key` (a string), `untracked` (a boolean), `paths` (strings). */
  private checkCache(location: string, cache: unknown, check: Errors): void {
    if (!isObj(cache)) return check.entry(location, 'config should be a hash');
    const unknown = Object.keys(cache).filter((k) => !CACHE_KEYS.includes(k));
    if (unknown.length > 0) check.entry(location, `config contains unknown keys: ${unknown.map(keyName).join(', ')}`);
    if (given(cache.key) && !isStr(cache.key)) check.entry(`${location}:key`, 'config should be a string or symbol');
    if (given(cache.untracked) && !isBool(cache.untracked)) check.entry(`${location}:untracked`, 'config should be a boolean value');
    if (given(cache.paths) && !isStrArray(cache.paths)) check.entry(`${location}:paths`, 'config should be an array of strings');
  }

  /**
   * One job (8.17's `Entry::Job` and its entries). The job, unless its value is not a hash (then
   * there is nothing more to check, nor a job to plan).
   */
  private checkJob(name: string, value: unknown, nonString: boolean, check: Errors): Job | undefined {
    // an empty name is located by the entry's class (8.17: "jobs:job name can't be blank")
    const at = `jobs:${name === '' ? 'job' : name}`;
    const j = isObj(value) ? value : undefined;
    if (!j) check.entry(at, 'config should be a hash');
    else {
      const unknown = Object.keys(j).filter((k) => !JOB_KEYS.includes(k));
      if (unknown.length > 0) check.entry(at, `config contains unknown keys: ${unknown.map(keyName).join(', ')}`);
    }
    if (blank(value)) check.entry(at, "config can't be blank");
    if (blank(j?.script)) check.entry(at, "script can't be blank");
    if (name === '') check.entry(at, "name can't be blank");
    // 8.17: `validates :name, type: Symbol` (an integer key stays an Integer)
    if (nonString) check.entry(at, 'name should be a symbol');
    if (!j) return undefined;
    if (given(j.tags) && !isStrArray(j.tags)) check.entry(at, 'tags should be an array of strings');
    if (given(j.allow_failure) && !isBool(j.allow_failure)) check.entry(at, 'allow failure should be a boolean value');
    if (given(j.when) && !JOB_WHEN.includes(j.when as string)) check.entry(at, 'when should be on_success, on_failure, always or manual');
    if (given(j.dependencies) && !isStrArray(j.dependencies)) check.entry(at, 'dependencies should be an array of strings');

    // its entries, in 8.17's order
    this.checkScript(`${at}:before_script`, j.before_script, check);
    if (given(j.script) && !isStr(j.script) && !isStrArray(j.script)) check.entry(`${at}:script`, 'config should be a string or an array of strings');
    // `type` is `stage` when `stage` is not given; the stage is `test` when neither is
    const stageKey = given(j.stage) ? 'stage' : given(j.type) ? 'type' : undefined;
    if (stageKey && !isStr(j[stageKey])) check.entry(`${at}:${stageKey}`, 'config should be a string');
    this.checkScript(`${at}:after_script`, j.after_script, check);
    if (given(j.cache)) this.checkCache(`${at}:cache`, j.cache, check);
    if (given(j.image) && !isStr(j.image)) check.entry(`${at}:image`, 'config should be a string');
    if (given(j.services) && !isStrArray(j.services)) check.entry(`${at}:services`, 'config should be an array of strings');
    for (const key of ['only', 'except'] as const) this.checkRefs(name, key, j[key], check);
    if (given(j.variables) && !isVariables(j.variables)) check.entry(`${at}:variables`, 'config should be a hash of key value pairs');
    if (given(j.artifacts)) this.checkArtifacts(`${at}:artifacts`, j.artifacts, check);
    if (given(j.environment)) this.checkEnvironment(`${at}:environment`, j.environment, check);
    if (given(j.coverage)) {
      const c = j.coverage;
      if (!(isStr(c) && looksLikeRegexp(c) && validRegexp(c.slice(1, -1)))) check.entry(`${at}:coverage`, 'config must be a regular expression');
      else if (c.length - 2 > MAX_REGEX_LENGTH) check.add(`${name} job: coverage parameter regexp is longer than ${MAX_REGEX_LENGTH} characters`);
    }
    return { name, stage: stageKey ? (j[stageKey] as string) : DEFAULT_STAGE, raw: j };
  }

  /** `only`/`except` (8.17's `Entry::Trigger`): strings, or `/regexps/`; the part before `@` of each is what is matched. */
  private checkRefs(name: string, key: 'only' | 'except', v: unknown, check: Errors): void {
    if (!given(v)) return;
    const at = `jobs:${name}:${key}`;
    if (!(Array.isArray(v) && v.every((p) => isStr(p) && (!looksLikeRegexp(p) || validRegexp(p.slice(1, -1)))))) {
      return check.entry(at, 'config should be an array of strings or regexps');
    }
    // this server's own: a regexp is bounded, and one before an `@project` compiles too (8.17 failed when matching)
    for (const spec of v as string[]) {
      const pattern = spec.split('@')[0];
      if (!looksLikeRegexp(pattern)) continue;
      const source = pattern.slice(1, -1);
      if (source.length > MAX_REGEX_LENGTH) check.add(`${name} job: ${key} parameter regexp is longer than ${MAX_REGEX_LENGTH} characters`);
      else if (!validRegexp(source)) check.entry(at, 'config should be an array of strings or regexps');
    }
  }

  /** 8.17's `Entry::Artifacts`. */
  private checkArtifacts(at: string, a: unknown, check: Errors): void {
    if (!isObj(a)) return check.entry(at, 'config should be a hash');
    const unknown = Object.keys(a).filter((k) => !ARTIFACTS_KEYS.includes(k));
    if (unknown.length > 0) check.entry(at, `config contains unknown keys: ${unknown.map(keyName).join(', ')}`);
    if (given(a.name) && !isStr(a.name)) check.entry(at, 'name should be a string');
    if (given(a.untracked) && !isBool(a.untracked)) check.entry(at, 'untracked should be a boolean value');
    if (given(a.paths) && !isStrArray(a.paths)) check.entry(at, 'paths should be an array of strings');
    if (given(a.when) && !ARTIFACTS_WHEN.includes(a.when as string)) check.entry(at, 'when should be on_success, on_failure or always');
    if (given(a.expire_in) && !(isStr(a.expire_in) && parseDuration(a.expire_in) !== undefined)) check.entry(at, 'expire in should be a duration');
  }

  /**
   * 8.17's `Entry::Environment`: a name (string), or a hash of `name`, `url` (at most 255 characters),
   * `action` (`start` or `stop`) and `on_stop` (a job's name). Names keep their `$VARIABLES`: they are
   * expanded when the build deploys. A `url` that is not a string is refused (8.17 took a number too).
   */
  private checkEnvironment(at: string, env: unknown, check: Errors): void {
    const hash = isObj(env);
    if (!hash && !isStr(env)) check.entry(at, 'config should be a hash or a string');
    const name = hash ? env.name : isStr(env) ? env : undefined;
    if (blank(name)) check.entry(at, "name can't be blank");
    if (!isStr(name) || !ENVIRONMENT_NAME.test(name)) check.entry(at, `name ${ENVIRONMENT_NAME_MESSAGE}`);
    if (!hash) return;
    const unknown = Object.keys(env).filter((k) => !ENVIRONMENT_KEYS.includes(k));
    if (unknown.length > 0) check.entry(at, `config contains unknown keys: ${unknown.map(keyName).join(', ')}`);
    if (given(env.url)) {
      if (!isStr(env.url)) check.entry(at, 'url should be a string');
      else if ([...env.url].length > 255) check.entry(at, 'url is too long (maximum is 255 characters)');
    }
    if (given(env.action) && env.action !== 'start' && env.action !== 'stop') check.entry(at, 'action should be start or stop');
    if (given(env.on_stop) && !isStr(env.on_stop)) check.entry(at, 'on stop should be a string');
  }

  /** 8.17's processor checks of a job (`validate_job_stage!`, `validate_job_dependencies!`, `validate_job_environment!`). */
  private checkJobLinks(job: Job, check: Errors): void {
    const { name, raw: j } = job;
    const p = `${name} job: `;
    const idx = this.stageIndex.get(job.stage);
    // the stage a job runs in, given or the default `test`, must be one of `stages` (a job on `test`
    // when `stages:` omits it is refused, never dropped)
    if (!isStr(job.stage) || idx === undefined) check.add(`${p}stage parameter should be ${this.stages.join(', ')}`);
    if (isStrArray(j.dependencies) && idx !== undefined) {
      for (const dep of j.dependencies) {
        const other = this.jobs.get(dep);
        if (!other) check.add(`${p}undefined dependency: ${dep}`);
        else if (!((this.stageIndex.get(other.stage) ?? Infinity) < idx)) check.add(`${p}dependency ${dep} is not defined in prior stages`);
      }
    }
    const env = j.environment;
    if (isObj(env) && given(env.on_stop) && isStr(env.on_stop)) {
      const on = env.on_stop;
      const other = this.jobs.get(on);
      const theirs = other && environmentValue(other.raw.environment);
      if (!other) check.add(`${p}on_stop job ${on} is not defined`);
      else if (!theirs) check.add(`${p}on_stop job ${on} does not have environment defined`);
      else if (theirs.name !== env.name) check.add(`${p}on_stop job ${on} have different environment name`);
      else if (theirs.action !== 'stop') check.add(`${p}on_stop job ${on} needs to have action stop defined`);
    }
  }

  /** A key of the job, or the global one when the job does not give it (8.17's `Job#inherit!`). */
  private inherited(j: Obj, key: (typeof INHERITED)[number]): unknown {
    return given(j[key]) ? j[key] : this.global[key];
  }

  /**
   * Refuses a file whose builds would be too large together: each build carries its own keys and
   * the global ones it does not override (linear: the globals are measured once).
   */
  private checkBuildsSize(check: Errors): void {
    const global = Object.fromEntries(INHERITED.map((key) => [key, sizeOf(this.global[key])]));
    let total = 0;
    for (const job of this.jobs.values()) {
      total += sizeOf(job.raw);
      for (const [key, size] of Object.entries(global)) if (!given(job.raw[key]) || key === 'variables') total += size;
      if (total > MAX_BUILDS_SIZE) {
        return check.add(
          `The .gitlab-ci.yml makes builds of more than ${MAX_BUILDS_SIZE / MB} MB in all (the global before_script, variables, cache… are copied into every job)`,
        );
      }
    }
  }

  /** What 8.17's `build_attributes` makes of a job: the build's row and its options. */
  private buildAttributes(job: Job): BuildAttributes {
    const j = job.raw;
    const before = (this.inherited(j, 'before_script') as string[] | undefined) ?? [];
    const script = isStr(j.script) ? [j.script] : (j.script as string[]);
    const options: JobOptions = {};
    const image = this.inherited(j, 'image') as string | undefined;
    const services = this.inherited(j, 'services') as string[] | undefined;
    const cache = this.inherited(j, 'cache') as Obj | undefined;
    const after = this.inherited(j, 'after_script') as string[] | undefined;
    const environment = environmentValue(j.environment);
    if (given(image)) options.image = image;
    if (given(services)) options.services = services;
    if (given(j.artifacts)) options.artifacts = j.artifacts as Obj;
    // 8.17's cache value: the keys given, in its order
    if (given(cache)) options.cache = Object.fromEntries(CACHE_KEYS.filter((k) => given(cache[k])).map((k) => [k, cache[k]]));
    if (given(j.dependencies)) options.dependencies = j.dependencies as string[];
    if (given(after)) options.after_script = after;
    if (environment) options.environment = environment;
    const own = j.variables as Record<string, string> | null | undefined;
    const toYaml = (vars: Record<string, string>) => Object.entries(vars).map(([key, value]) => ({ key, value, public: true }));
    // the global variables alone are listed once and shared by the builds that add none
    const yamlVariables = own && Object.keys(own).length > 0 ? toYaml({ ...this.variables, ...own }) : (this.globalYamlVariables ??= toYaml(this.variables));
    const build: BuildAttributes = {
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
    if (environment) build.environment = environment.name;
    if (isStr(j.coverage)) build.coverageRegex = j.coverage.slice(1, -1);
    return build;
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

  /** 8.17's `match_ref?`: `branches`, `tags`, `triggers`, a `/regexp/` or the ref's name, before an optional `@namespace/project`. */
  private matchRef(spec: string, ref: string, tag: boolean, trigger: boolean): boolean {
    const at = spec.indexOf('@');
    const pattern = at === -1 ? spec : spec.slice(0, at);
    const path = at === -1 ? undefined : spec.slice(at + 1);
    if (path !== undefined && path !== this.path) return false;
    if (tag && pattern === 'tags') return true;
    if (!tag && pattern === 'branches') return true;
    if (trigger && pattern === 'triggers') return true;
    if (looksLikeRegexp(pattern)) return testRegex(pattern.slice(1, -1), ref);
    return pattern === ref;
  }
}
