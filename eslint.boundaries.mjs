// Import boundaries between areas (issue 23): each table has one owner area, and other areas reach it
// only through what the owner's module exports — its services.
//
// An area is a folder under src/ (src/common/<x> and src/ci/<x> are areas of their own: each is one Nest
// module with its own tables); files directly in src/ are the composition root, which wires every
// area's providers. The rules, for every file of src/ (unit specs included):
//
//  1. No import of another area's repository file (`*.repository`), for values or for types: its
//     rows and helpers come from the area's service (the service file re-exports the row types
//     callers need).
//  2. Another area's entity classes (`*.entity`, `*.entities`) may be imported as types and as join
//     targets of a read query (TypeORM wants the class itself in innerJoin/JoinedEntity), but never
//     registered or written outside their owner: no `TypeOrmModule.forFeature([...])`,
//     `getRepository(...)`, `@InjectRepository(...)` or manager write (`insert`, `save`, `update`,
//     `delete`, `upsert`, `remove`, `softDelete`, `increment`, `decrement`) with another area's entity.
//  3. A module's `exports:` names services, never a repository.
//
//  4. Raw SQL writes (`INSERT INTO t`, `UPDATE t`, `DELETE FROM t` in a string or template literal) name
//     only the file's own area's tables, by the owner map TABLE_OWNERS below (ARCHITECTURE.md, "Who owns
//     which table"); a table missing from the map is an error too, so a new table gets its owner.
//     Migrations (src/database/migrations) write every table and are left out.
//
//
//  5. The stack (LAYERS below, ARCHITECTURE.md "The stack"): every folder of src/ (and each file directly
//     in src/) sits at one place of one named layer, listed top to bottom; an import may point only
//     down the list, or stay inside its own folder. The few pairs of areas that need each other both
//     ways are listed in MUTUAL with their reason; nothing else may point up. A folder missing from
//     the list is an error too, so a new folder gets its place.
//
// Reads of another area's table inside one statement (a list's joins, a window count) stay allowed:
// the house rule "a list query is one statement with its joins" wins over a round trip per area.
import path from 'node:path';

const SRC = path.join(import.meta.dirname, 'src');
const SPLIT = new Set(['common', 'ci']);
const REPOSITORY = /\.repository$/;
const ENTITY = /\.entit(y|ies)$/;
const OWNED_CALLS = new Set([
  'forFeature',
  'getRepository',
  'InjectRepository',
  'insert',
  'save',
  'update',
  'delete',
  'upsert',
  'remove',
  'softDelete',
  'increment',
  'decrement',
]);

/** Each table's owner area (ARCHITECTURE.md, "Who owns which table"); `pgboss.` is the queue's schema. */
const TABLE_OWNERS = {
  users: 'users',
  identities: 'users',
  keys: 'users',
  emails: 'users',
  deploy_keys_projects: 'deploy-keys',
  lfs_objects: 'lfs',
  lfs_objects_projects: 'lfs',
  namespaces: 'namespaces',
  projects: 'projects',
  users_star_projects: 'projects',
  project_members: 'members',
  group_members: 'members',
  issues: 'issues',
  merge_requests: 'merge-requests',
  milestones: 'milestones',
  labels: 'labels',
  label_links: 'labels',
  notes: 'notes',
  snippets: 'snippets',
  subscriptions: 'subscriptions',
  events: 'events',
  protected_branches: 'repo-api',
  releases: 'repo-api',
  commit_comments: 'repo-api',
  ci_builds: 'ci/builds',
  commit_statuses: 'ci/builds',
  ci_pipelines: 'ci/pipelines',
  ci_runners: 'ci/runners',
  ci_runner_projects: 'ci/runners',
  ci_triggers: 'ci/triggers',
  ci_trigger_requests: 'ci/triggers',
  ci_variables: 'ci/variables',
  environments: 'ci/environments',
  deployments: 'ci/environments',
  web_hooks: 'webhooks',
  web_hook_logs: 'webhooks',
  application_settings: 'application-settings',
  oauth_access_tokens: 'oauth',
  notification_settings: 'notifications',
  login_attempts: 'throttle',
  request_rate_counters: 'common/http',
  internal_ids: 'database',
  // kept by triggers of the migrations; no area writes it
  project_authorizations: null,
};
const SCHEMA_OWNERS = { pgboss: 'queue' };

/**
 * The stack, top to bottom: a folder may import only the folders listed after it (ARCHITECTURE.md, "The
 * stack"). Nodes are the top-level folders of src/ and the files directly in it, and each subfolder of
 * src/common/ and src/ci/ (as for tables). Within the areas, the order is the order of use: an area
 * lists after every area it calls.
 */
export const LAYERS = [
  { name: 'programs', nodes: ['main.ts', 'cli.ts', 'write-openapi.ts', 'ormconfig.ts', 'admin'] },
  { name: 'composition', nodes: ['app.factory.ts', 'app.module.ts', 'core.module.ts'] },
  {
    name: 'areas',
    nodes: [
      // the doors: pages, health, git transports and the runner API
      'home',
      'pages',
      'health',
      'ssh',
      'git-http',
      'auth',
      'ci',
      'ci/runner-api',
      'ci/badges',
      // what reads or reacts across areas: the notes API, the activity feed, hooks, notifications
      'notes-api',
      'events',
      'webhooks',
      'notifications',
      // CI and the repository
      'ci/environments',
      'ci/triggers',
      'ci/variables',
      // Git LFS objects: served by git-http, tokens handed out by ssh
      'lfs',
      'git-access',
      'merge-requests',
      'repo-api',
      'ci/builds',
      'ci/pipelines',
      'ci/runners',
      // deploy keys: enabled on projects, read by git access and the SSH server
      'deploy-keys',
      // issues and what they are made of
      'issues',
      'issuables',
      'labels',
      'milestones',
      'snippets',
      'notes',
      'subscriptions',
      // people, projects and the instance
      'licenses',
      'oauth',
      'ldap',
      'groups',
      'members',
      'projects',
      'users',
      'namespaces',
      'application-settings',
    ],
  },
  { name: 'shared services', nodes: ['domain-events', 'queue', 'git', 'throttle', 'openapi', 'metrics'] },
  { name: 'infrastructure', nodes: ['database'] },
  {
    name: 'common',
    nodes: [
      'common/http',
      'common/dto',
      'common/pagination',
      'common/params',
      'common/policy',
      'common/discovery',
      'common/caller',
      'common/crypto',
      'common/net',
      'common/errors',
      'common/logging',
      'config',
      'types',
    ],
  },
];

/** The pairs of areas that import each other, with the reason (each way is allowed; nothing else points up). */
export const MUTUAL = [
  ['projects', 'members', 'a project is created with its owner as member; members are listed and checked against their project'],
  ['members', 'groups', 'a group is created with its owner as member; group members are managed through the group'],
  ['users', 'projects', "a user's personal projects go with the user; projects present their owners and creators"],
  ['ci/builds', 'ci/pipelines', 'a pipeline is made of builds, and a build moves its pipeline on'],
];

/** A write statement's table: SQL keywords in capitals, identifiers in lower case (the house style). */
const SQL_WRITE = /\b(INSERT\s+INTO|(?<!(?:FOR|KEY|DO)\s+)UPDATE|DELETE\s+FROM)\s+(?:ONLY\s+)?"?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)"?/g;
const MIGRATIONS = path.join(SRC, 'database', 'migrations') + path.sep;

/** The owner area of a table named in SQL (undefined when the map does not know it). */
function ownerOfTable(name) {
  const dot = name.indexOf('.');
  if (dot >= 0) return Object.hasOwn(SCHEMA_OWNERS, name.slice(0, dot)) ? SCHEMA_OWNERS[name.slice(0, dot)] : undefined;
  return Object.hasOwn(TABLE_OWNERS, name) ? TABLE_OWNERS[name] : undefined;
}

/** The area of a file under src/ (null outside src/ and for the composition root). */
function areaOf(file) {
  const rel = path.relative(SRC, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (parts.length === 1) return null;
  if (SPLIT.has(parts[0]) && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

/** The import's target when it is a relative path into another area's file, else null. */
function foreignTarget(context, source) {
  if (typeof source !== 'string' || !source.startsWith('.')) return null;
  const file = context.filename;
  const from = areaOf(file);
  if (from === null) return null;
  const target = path.resolve(path.dirname(file), source);
  const to = areaOf(target);
  if (to === null || to === from) return null;
  return { from, to, base: path.basename(target) };
}

const noForeignRepository = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { repository: "'{{source}}' is the {{to}} area's repository: call its service instead (tables belong to one area)." },
  },
  create(context) {
    const check = (node) => {
      const t = node.source && foreignTarget(context, node.source.value);
      if (t && REPOSITORY.test(t.base)) context.report({ node, messageId: 'repository', data: { source: node.source.value, to: t.to } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

const noForeignEntityWrites = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      entity: "'{{name}}' is an entity of the {{to}} area: only its owner registers, injects or writes it ({{call}}); call the {{to}} area's service.",
    },
  },
  create(context) {
    /** Local name → owning area, for the entities imported from other areas. */
    const foreign = new Map();
    const argNames = (arg) => (arg.type === 'ArrayExpression' ? arg.elements.filter(Boolean) : [arg]).filter((a) => a.type === 'Identifier');
    return {
      ImportDeclaration(node) {
        const t = foreignTarget(context, node.source.value);
        if (!t || !ENTITY.test(t.base)) return;
        for (const s of node.specifiers) foreign.set(s.local.name, t.to);
      },
      CallExpression(node) {
        const callee = node.callee;
        const name =
          callee.type === 'Identifier'
            ? callee.name
            : callee.type === 'MemberExpression' && callee.property.type === 'Identifier'
              ? callee.property.name
              : null;
        if (!name || !OWNED_CALLS.has(name)) return;
        for (const arg of node.arguments) {
          for (const id of argNames(arg)) {
            const to = foreign.get(id.name);
            if (to) context.report({ node: id, messageId: 'entity', data: { name: id.name, to, call: name } });
          }
        }
      },
    };
  },
};

const modulesExportServices = {
  meta: { type: 'problem', schema: [], messages: { exported: "A module exports services, never a repository: '{{name}}'." } },
  create(context) {
    const repositories = new Set();
    return {
      ImportDeclaration(node) {
        if (typeof node.source.value === 'string' && REPOSITORY.test(node.source.value)) for (const s of node.specifiers) repositories.add(s.local.name);
      },
      Property(node) {
        if (node.key.type !== 'Identifier' || node.key.name !== 'exports' || node.value.type !== 'ArrayExpression') return;
        for (const e of node.value.elements) {
          if (e && e.type === 'Identifier' && (repositories.has(e.name) || /Repository$/.test(e.name)))
            context.report({ node: e, messageId: 'exported', data: { name: e.name } });
        }
      },
    };
  },
};

const noForeignTableWrites = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      foreign:
        "'{{verb}} {{table}}': the {{owner}} area owns '{{table}}': call its service (a method taking the transaction) instead of writing it from {{from}}.",
      unowned: "'{{verb}} {{table}}': no area owns '{{table}}' in TABLE_OWNERS (eslint.boundaries.mjs): add it with its owner.",
    },
  },
  create(context) {
    const file = context.filename;
    const from = areaOf(file);
    if (from === null || file.startsWith(MIGRATIONS)) return {};
    const check = (node, text) => {
      if (typeof text !== 'string') return;
      for (const m of text.matchAll(SQL_WRITE)) {
        const [verb, table] = [m[1].replace(/\s+/g, ' '), m[2]];
        const owner = ownerOfTable(table);
        if (owner === undefined) context.report({ node, messageId: 'unowned', data: { verb, table } });
        else if (owner !== from) context.report({ node, messageId: 'foreign', data: { verb, table, owner: owner ?? 'no', from } });
      }
    };
    return {
      Literal: (node) => check(node, node.value),
      TemplateLiteral: (node) => check(node, node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' ')),
    };
  },
};

/** The node of a file of src/ in the stack: its top-level folder (or file), or `common/x` / `ci/x`; null outside src/. */
export function stackNode(file) {
  const rel = path.relative(SRC, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (parts.length === 1) return parts[0].replace(/(\.(d\.)?[cm]?[jt]s)?$/, '.ts');
  if (SPLIT.has(parts[0]) && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

const RANK = new Map();
const LAYER_OF = new Map();
LAYERS.forEach((layer) => layer.nodes.forEach((n) => (RANK.set(n, RANK.size), LAYER_OF.set(n, layer.name))));
const MUTUAL_KEYS = new Set(MUTUAL.flatMap(([a, b]) => [`${a}>${b}`, `${b}>${a}`]));

/** Why an import from `from` to `to` (stack nodes) is not allowed, or null when it is. */
export function upwardImport(from, to) {
  if (from === to || !RANK.has(from) || !RANK.has(to)) return null;
  if (RANK.get(to) > RANK.get(from) || MUTUAL_KEYS.has(`${from}>${to}`)) return null;
  return `${from} (${LAYER_OF.get(from)}) may not import ${to} (${LAYER_OF.get(to)}), which sits above it`;
}

const stackOrder = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      upward: "'{{source}}' points up the stack: {{why}} (LAYERS in eslint.boundaries.mjs; move the code down, or emit a domain event).",
      unplaced: '\'{{node}}\' has no place in the stack: add it to LAYERS in eslint.boundaries.mjs (ARCHITECTURE.md, "The stack").',
    },
  },
  create(context) {
    const file = context.filename;
    const from = stackNode(file);
    // unit specs are not part of the program: a spec may reach for what it tests with (as the folder count does)
    if (from === null || file.startsWith(MIGRATIONS) || file.endsWith('.spec.ts')) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = stackNode(path.resolve(path.dirname(file), source));
      if (to === null || to === from) return;
      for (const n of [from, to]) if (!RANK.has(n)) return context.report({ node, messageId: 'unplaced', data: { node: n } });
      const why = upwardImport(from, to);
      if (why) context.report({ node, messageId: 'upward', data: { source, why } });
    };
    const bySource = (node) => node.source && check(node, node.source.value);
    return {
      ImportDeclaration: bySource,
      ExportNamedDeclaration: bySource,
      ExportAllDeclaration: bySource,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      TSImportType: (node) => {
        const src = 'source' in node ? node.source : node.argument;
        const arg = src?.literal ?? src;
        if (arg && arg.type === 'Literal') check(node, arg.value);
      },
    };
  },
};

export default [
  {
    files: ['src/**/*.ts'],
    plugins: {
      boundaries: {
        rules: {
          'no-foreign-repository': noForeignRepository,
          'no-foreign-entity-writes': noForeignEntityWrites,
          'modules-export-services': modulesExportServices,
          'no-foreign-table-writes': noForeignTableWrites,
          'stack-order': stackOrder,
        },
      },
    },
    rules: {
      'boundaries/no-foreign-repository': 'error',
      'boundaries/no-foreign-entity-writes': 'error',
      'boundaries/modules-export-services': 'error',
      'boundaries/no-foreign-table-writes': 'error',
      'boundaries/stack-order': 'error',
    },
  },
];
