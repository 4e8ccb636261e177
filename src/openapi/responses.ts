/**
 * The success response of each route, keyed by `METHOD path` (GitLab's path, without `/api/v3`; the
 * runner API with its `/ci/api/v1`). Schemas are the entities of entities.ts. The status is the
 * route's own (201 for creating POSTs, spec-decisions 1) unless an entry says otherwise.
 *
 * Keep an entry per route: a route missing here is documented without a response schema, and an
 * entry that matches no route must belong to an area still being built (openapi.e2e-spec.ts checks
 * both against its PENDING list).
 */

export interface ResponseSpec {
  /** Entity name (entities.ts), or an inline schema. */
  schema?: string | Record<string, unknown>;
  /** `page`: a paginated array (Link and X-* headers; every list is one); `array`: the whole list, no headers. */
  list?: 'page' | 'array';
  /** A non-JSON body. */
  content?: 'text/plain' | 'application/octet-stream';
  /** Overrides the route's status. */
  status?: number;
  /** `304 Not Modified` when already in the requested state (subscriptions, stars). */
  notModified?: boolean;
  description?: string;
}

const one = (schema: string, extra: Partial<ResponseSpec> = {}): ResponseSpec => ({ schema, ...extra });
const page = (schema: string): ResponseSpec => ({ schema, list: 'page' });
const text = (description: string): ResponseSpec => ({ content: 'text/plain', description });
const binary = (description: string): ResponseSpec => ({ content: 'application/octet-stream', description });
const TRUE: ResponseSpec = { schema: { type: 'boolean', enum: [true] }, description: 'the JSON value `true`' };

/**
 * The entry of a route: its own, or the one of the path it is a legacy alias of (the singular
 * `/projects/:id/merge_request/:id/...` paths old clients call).
 */
export function responseFor(key: string): ResponseSpec | undefined {
  return RESPONSES[key] ?? RESPONSES[key.replace('/merge_request/', '/merge_requests/')];
}

export const RESPONSES: Record<string, ResponseSpec> = {
  // --- session, users, keys, emails ---

  // --- namespaces, groups, members ---

  // --- projects ---

  // --- issues, milestones, labels, notes, snippets ---

  // --- repository ---

  // --- merge requests (module in progress) ---

  // --- CI (modules in progress) ---

  // --- admin: system hooks, project hooks, settings; licenses; misc ---
};
