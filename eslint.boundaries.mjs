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
        },
      },
    },
    rules: {
      'boundaries/no-foreign-repository': 'error',
      'boundaries/no-foreign-entity-writes': 'error',
      'boundaries/modules-export-services': 'error',
      'boundaries/no-foreign-table-writes': 'error',
    },
  },
];
