import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import request from 'supertest';

/**
 * `await expectSchema(res, 'Issue')` (or `'Issue[]'` for a list): the real response body must match the
 * schema of that name in the OpenAPI document the app generates (GET /api/v3/openapi.json of the
 * server that answered `res`). Response schemas are closed (additionalProperties false), so an
 * undeclared field, a missing required one, a null where none is allowed or a wrong type fails.
 *
 * OpenAPI 3.0's `nullable: true` becomes JSON Schema's "or null" before Ajv compiles the schemas.
 */
type Json = Record<string, unknown>;

interface Validators {
  ajv: Ajv;
  cache: Map<string, ValidateFunction>;
  schemas: Record<string, Json>;
}

const byServer = new WeakMap<object, Promise<Validators>>();

/** OpenAPI 3.0 → JSON Schema: `nullable` to `anyOf [..., null]`, recursively. */
export function toJsonSchema(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toJsonSchema);
  if (!v || typeof v !== 'object') return v;
  const { nullable, ...rest } = v as Json;
  const out = Object.fromEntries(Object.entries(rest).map(([k, x]) => [k, k === 'properties' ? mapValues(x as Json) : toJsonSchema(x)]));
  return nullable ? { anyOf: [out, { type: 'null' }] } : out;
}

function mapValues(props: Json): Json {
  return Object.fromEntries(Object.entries(props).map(([k, x]) => [k, toJsonSchema(x)]));
}

/** Ajv over the components of a document; `$ref`s `#/components/schemas/X` resolve inside it. */
export function validatorsFor(document: Json): Validators {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const components = document.components as Json;
  ajv.addSchema({ $id: 'openapi', components: { schemas: toJsonSchema(components.schemas) } });
  return { ajv, cache: new Map(), schemas: components.schemas as Record<string, Json> };
}

export function validatorOf(v: Validators, name: string): ValidateFunction {
  let fn = v.cache.get(name);
  if (!fn) {
    const list = name.endsWith('[]');
    const ref = { $ref: `openapi#/components/schemas/${list ? name.slice(0, -2) : name}` };
    fn = v.ajv.compile(list ? { type: 'array', items: ref } : ref);
    v.cache.set(name, fn);
  }
  return fn;
}

/** The server that answered `res` (supertest keeps it on the request as `app`). */
function serverOf(res: request.Response): object {
  const app = (res as unknown as { request?: { app?: object } }).request?.app;
  if (!app) throw new Error('expectSchema: not a supertest response');
  return app;
}

export async function expectSchema(res: request.Response, name: string): Promise<void> {
  const server = serverOf(res);
  let pending = byServer.get(server);
  if (!pending) {
    pending = request(server as Parameters<typeof request>[0])
      .get('/api/v3/openapi.json')
      .then((doc) => {
        if (doc.status !== 200) throw new Error(`GET /api/v3/openapi.json answered ${doc.status}`);
        return validatorsFor(doc.body as Json);
      });
    byServer.set(server, pending);
  }
  const v = await pending;
  const validate = validatorOf(v, name);
  if (!validate(res.body)) {
    const errors = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
    const req = (res as unknown as { req?: { method?: string; path?: string } }).req;
    throw new Error(`response of ${req?.method ?? ''} ${req?.path ?? ''} does not match ${name}:\n  ${errors.join('\n  ')}`);
  }
  const misordered = orderProblem(v, name, res.body);
  if (misordered) throw new Error(`response does not keep the field order of ${name}: ${misordered}`);
}

/**
 * The wire order: the schema's `required` list keeps the order the class declares its properties in
 * (the order presenters emit them; the document's sorted keys do not), so the body's keys among
 * them must come in that order (each item of a list).
 */
export function orderProblem(v: Validators, name: string, body: unknown): string | undefined {
  const list = name.endsWith('[]');
  const schema = v.schemas[list ? name.slice(0, -2) : name];
  const required = (schema?.required ?? []) as string[];
  for (const item of list ? (body as unknown[]) : [body]) {
    if (!item || typeof item !== 'object') continue;
    const keys = Object.keys(item).filter((k) => required.includes(k));
    const expected = required.filter((k) => k in item);
    if (keys.join() !== expected.join()) return `${keys.join(', ')} instead of ${expected.join(', ')}`;
  }
  return undefined;
}
