import { INestApplication, Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PARAMTYPES_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common/enums';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { IS_ADMIN, IS_PUBLIC } from '../common/caller/caller';
import { INPUT, Params } from '../common/params/params';
import { API_PREFIX, EXPANSIONS, expandKinds, gitlabPath, INCLUDED_PREFIXES, pathParameter } from './paths';
import { RESPONSE_CLASSES, RESPONSE_ENTITIES } from './response-types';

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
/** Methods whose inputs GitLab clients send in the query string (the others send a body). */
const QUERY_METHODS = new Set(['get', 'delete', 'head']);
/** Where @nestjs/swagger keeps a handler's @ApiResponse declarations (its DECORATORS.API_RESPONSE). */
const API_RESPONSE_METADATA = 'swagger/apiResponse';
const NOT_DTO: ReadonlySet<unknown> = new Set([Params, Object, String, Number, Boolean, Array, undefined]);

/** What the document needs to know about one handler, found through its route metadata. */
interface HandlerInfo {
  input?: Type<unknown>;
  isPublic: boolean;
  isAdmin: boolean;
  /** The handler declares its answer (`@ApiOkResponse({ type })` and the like, response-types.ts). */
  declared: boolean;
  /** The status the route answers with: its @HttpCode, else 201 for POST and 200 for the others. */
  status: number;
}

/** Document path (`/api/v3/projects/{id}`) → route key (`GET /projects/{id}`). */
export function responseKey(method: string, docPath: string): string {
  const path = docPath.startsWith(API_PREFIX + '/') ? docPath.slice(API_PREFIX.length) : docPath;
  return `${method.toUpperCase()} ${path}`;
}

/**
 * Walks every controller of the app: for each handler, the DTO class of its `@Input()` parameter
 * (ROUTE_ARGS_METADATA entry with the INPUT data, typed by `design:paramtypes`) and its @Public /
 * @Admin marks. Keyed like the operation ids given to swagger (`Controller.method`).
 */
function scanHandlers(app: INestApplication): Map<string, HandlerInfo> {
  const container = (app as unknown as { container: { getModules(): Map<string, { controllers: Map<unknown, { metatype?: unknown }> }> } }).container;
  const out = new Map<string, HandlerInfo>();
  for (const module of container.getModules().values()) {
    for (const wrapper of module.controllers.values()) {
      const cls = wrapper.metatype as Type<unknown> | undefined;
      if (typeof cls !== 'function') continue;
      for (let proto = cls.prototype as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
        for (const name of Object.getOwnPropertyNames(proto)) {
          const key = `${cls.name}.${name}`;
          const handler: unknown = Object.getOwnPropertyDescriptor(proto, name)?.value;
          if (out.has(key) || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
          const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, name) ?? {}) as Record<string, { index: number; data?: unknown }>;
          const types = (Reflect.getMetadata(PARAMTYPES_METADATA, proto, name) ?? []) as unknown[];
          const arg = Object.values(args).find((a) => a.data === INPUT);
          const type = arg ? types[arg.index] : undefined;
          const flag = (meta: string) => !!(Reflect.getMetadata(meta, handler) ?? Reflect.getMetadata(meta, cls));
          const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
          out.set(key, {
            input: NOT_DTO.has(type) ? undefined : (type as Type<unknown>),
            isPublic: flag(IS_PUBLIC),
            isAdmin: flag(IS_ADMIN),
            declared: Reflect.getMetadata(API_RESPONSE_METADATA, handler) !== undefined,
            status: (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (requestMethod === RequestMethod.POST ? 201 : 200),
          });
        }
      }
    }
  }
  return out;
}

const PAGINATION_HEADERS: Record<string, Json> = {
  Link: { description: 'rel="prev", "next", "first", "last" URLs (absolute)', schema: { type: 'string' } },
  'X-Total': { description: 'number of items', schema: { type: 'string' } },
  'X-Total-Pages': { description: 'number of pages', schema: { type: 'string' } },
  'X-Per-Page': { description: 'items per page', schema: { type: 'string' } },
  'X-Page': { description: 'this page, from 1', schema: { type: 'string' } },
  'X-Next-Page': { description: 'next page, empty on the last one', schema: { type: 'string' } },
  'X-Prev-Page': { description: 'previous page, empty on the first one', schema: { type: 'string' } },
};

const ERROR_RESPONSES: Record<string, Json> = {
  BadRequest: { description: '`400 (Bad request) "x" not given`, `"x" is invalid`, or a field map', content: errorContent() },
  Unauthorized: { description: '`401 Unauthorized`: no valid credentials', content: errorContent() },
  Forbidden: { description: '`403 Forbidden`', content: errorContent() },
  NotFound: { description: '`404 <Resource> Not Found`, also for what the caller may not see', content: errorContent() },
};

function errorContent(): Json {
  return { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
}

/** GitLab's error body (every error answer; not a presenter's: the exception filter writes it). */
const ERROR_SCHEMA: Json = {
  type: 'object',
  description:
    'GitLab error body: `{"message": "404 Project Not Found"}`, `{"message": "400 (Bad request) \\"title\\" not given"}` or a field map `{"message": {"title": ["can\'t be blank"]}}`',
  properties: {
    message: { oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true, description: 'field → array of messages' }] },
  },
  required: ['message'],
};

/**
 * The answers a handler declares (swagger's scan of its @ApiResponse decorators). The success status
 * must be the one the route really answers with: a declaration cannot drift from @HttpCode.
 */
function declaredResponses(op: Json, info: HandlerInfo, route: string): Record<string, Json> {
  const declared = { ...((op.responses ?? {}) as Record<string, Json>) };
  const success = Object.keys(declared).filter((s) => /^2\d\d$/.test(s));
  if (success.length !== 1 || Number(success[0]) !== info.status) {
    throw new Error(`OpenAPI: ${route} declares ${success.join(', ') || 'no success'} but answers ${info.status}`);
  }
  return declared;
}

/** Query parameters from a DTO schema: one per property, in declaration order. */
function queryParameters(schema: Json): Json[] {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema: rest,
      ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
    };
  });
}

/** `GET /projects/{id}/issues` → `getProjectsIdIssues`. */
function operationId(method: string, path: string): string {
  const words = path
    .replace(API_PREFIX + '/', '/')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

const DESCRIPTION = [
  'GitLab 8.x API v3 (and the CI runner API v1), as this server serves it.',
  '',
  'Inputs of every operation may be sent as query-string parameters, form fields or a JSON body alike;',
  'unknown parameters are ignored and `null` means "not given". A project `:id` is its number or the',
  'URL-encoded `NAMESPACE%2FPROJECT_NAME`. Lists take `page` (from 1) and `per_page` (default 20, max 100)',
  'and answer Link and X-* pagination headers. Administrators may act as another user with `sudo`',
  '(parameter or `SUDO` header). Errors are `{"message": ...}` bodies with GitLab\'s texts.',
].join('\n');

/** What a build can tell its caller besides the document (tests check it). */
export interface BuildReport {
  /** EXPANSIONS keys (paths.ts) that matched no route. */
  unusedExpansions?: string[];
  /** Routes (`METHOD /path`) whose handler declares no response type (none may: test/openapi.e2e-spec.ts). */
  untyped?: string[];
}

/**
 * Builds the OpenAPI 3 document of the app's real routes: @nestjs/swagger's scan, then GitLab's
 * paths (catch-all routes expanded, parameters renamed), request schemas from the `@Input()` DTO of
 * each handler, responses from each handler's declaration (`@ApiOkResponse({ type })` and the shorthands
 * of response-types.ts; the response classes' schemas closed), and the auth requirements.
 * Deterministic: nothing depends on time or configuration.
 */
export function buildOpenApiDocument(app: INestApplication, report: BuildReport = {}): OpenAPIObject {
  const handlers = scanHandlers(app);
  const dtos = new Map<string, Type<unknown>>();
  for (const h of handlers.values()) {
    if (!h.input) continue;
    const other = dtos.get(h.input.name);
    if (other && other !== h.input) throw new Error(`OpenAPI: two input DTO classes are named ${h.input.name}`);
    if (RESPONSE_ENTITIES.has(h.input.name)) throw new Error(`OpenAPI: DTO ${h.input.name} has the name of a response entity`);
    dtos.set(h.input.name, h.input);
  }

  const config = new DocumentBuilder().setTitle('GitLab API v3 (compatible server)').setDescription(DESCRIPTION).setVersion('8.8.0').build();
  const scanned = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller: string, method: string) => `${controller}.${method}`,
    extraModels: [...dtos.values(), ...RESPONSE_CLASSES],
  });

  const paths: Record<string, Json> = {};
  const usedExpansions = new Set<string>();
  const untyped: string[] = [];
  for (const [appPath, item] of Object.entries(scanned.paths)) {
    if (!INCLUDED_PREFIXES.some((p) => appPath.startsWith(p))) continue;
    const inApi = appPath.startsWith(API_PREFIX + '/');
    const shortPath = inApi ? appPath.slice(API_PREFIX.length) : appPath;
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (!op) continue;
      const expansionKey = `${method.toUpperCase()} ${shortPath}`;
      const targets = EXPANSIONS[expansionKey] ?? [shortPath];
      if (EXPANSIONS[expansionKey]) usedExpansions.add(expansionKey);
      // swagger suffixes `[n]` for a handler with several paths and `_method` for @All routes
      const opKey = (typeof op.operationId === 'string' ? op.operationId : '').replace(/(\[\d+\])?(_[a-z]+)?$/, '');
      const info = handlers.get(opKey);
      if (!info) throw new Error(`OpenAPI: no handler found for ${opKey}`);
      for (const target of targets.flatMap(expandKinds)) {
        const renamed = gitlabPath(target).path;
        const docPath = (inApi ? API_PREFIX : '') + renamed;
        const pathItem = (paths[docPath] ??= {});
        if (pathItem[method]) throw new Error(`OpenAPI: two routes answer ${method.toUpperCase()} ${docPath}`);
        pathItem[method] = operation(method, docPath, renamed, op, info, scanned);
        if (!info.declared) untyped.push(responseKey(method, docPath));
      }
    }
  }
  report.unusedExpansions = Object.keys(EXPANSIONS).filter((key) => !usedExpansions.has(key));
  report.untyped = untyped;

  const schemas: Record<string, Json> = { ...((scanned.components?.schemas ?? {}) as Record<string, Json>), Error: ERROR_SCHEMA };
  for (const name of RESPONSE_ENTITIES) schemas[name] = { ...schemas[name], additionalProperties: false };
  return {
    openapi: scanned.openapi,
    info: scanned.info,
    servers: [{ url: '/', description: 'this server; the v3 API is under /api/v3, the runner API under /ci/api/v1' }],
    paths: paths,
    components: {
      schemas: schemas,
      headers: PAGINATION_HEADERS,
      responses: ERROR_RESPONSES as never,
      securitySchemes: {
        private_token_header: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
        private_token: { type: 'apiKey', in: 'query', name: 'private_token' },
        oauth2_bearer: { type: 'http', scheme: 'bearer', description: 'OAuth 2.0 access token (POST /oauth/token)' },
        access_token: { type: 'apiKey', in: 'query', name: 'access_token' },
      },
    },
    security: [{ private_token_header: [] }, { private_token: [] }, { oauth2_bearer: [] }, { access_token: [] }],
  };
}

function operation(method: string, docPath: string, shortPath: string, op: Json, info: HandlerInfo, scanned: OpenAPIObject): Json {
  const pathNames = [...docPath.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const parameters: Json[] = pathNames.map((n) => pathParameter(shortPath, n));
  for (const p of (op.parameters ?? []) as Json[]) if (p.in !== 'path') parameters.push(p);
  let requestBody: Json | undefined;
  if (info.input) {
    const schema = (scanned.components?.schemas ?? {})[info.input.name] as Json | undefined;
    if (!schema) throw new Error(`OpenAPI: no schema for ${info.input.name}`);
    if (QUERY_METHODS.has(method)) {
      const taken = new Set(parameters.map((p) => p.name));
      parameters.push(...queryParameters(schema).filter((p) => !taken.has(p.name)));
    } else {
      const ref = { $ref: `#/components/schemas/${info.input.name}` };
      requestBody = {
        required: ((schema.required ?? []) as unknown[]).length > 0,
        content: { 'application/json': { schema: ref }, 'application/x-www-form-urlencoded': { schema: ref } },
      };
    }
  }
  const responses: Record<string, Json> = info.declared
    ? declaredResponses(op, info, `${method.toUpperCase()} ${docPath}`)
    : { [String(info.status)]: { description: 'not declared (the openapi spec fails for this route)' } };
  if (info.input) responses['400'] = { $ref: '#/components/responses/BadRequest' };
  if (!info.isPublic) responses['401'] = { $ref: '#/components/responses/Unauthorized' };
  if (info.isAdmin) responses['403'] = { $ref: '#/components/responses/Forbidden' };
  if (pathNames.length) responses['404'] = { $ref: '#/components/responses/NotFound' };
  return {
    operationId: operationId(method, docPath),
    ...(op.tags ? { tags: op.tags } : {}),
    ...(info.isAdmin ? { description: 'Administrators only.' } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    ...(info.isPublic ? { security: [] } : {}),
  };
}

/** JSON with every object's keys sorted (arrays keep their order), two-space indent, final newline. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as Json)
          .sort()
          .filter((k) => (v as Json)[k] !== undefined)
          .map((k) => [k, sort((v as Json)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 2) + '\n';
}
