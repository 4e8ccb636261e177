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

export default [
  {
    files: ['src/**/*.ts'],
    plugins: {
      boundaries: {
        rules: {
          'no-foreign-repository': noForeignRepository,
          'no-foreign-entity-writes': noForeignEntityWrites,
          'modules-export-services': modulesExportServices,
        },
      },
    },
    rules: {
      'boundaries/no-foreign-repository': 'error',
      'boundaries/no-foreign-entity-writes': 'error',
      'boundaries/modules-export-services': 'error',
    },
  },
];
