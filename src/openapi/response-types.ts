import { Type } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiResponse, ApiSchema, getSchemaPath } from '@nestjs/swagger';

/**
 * The wire format, declared once. A presenter returns a response class (`presentIssue(...): IssueResponse`)
 * whose properties carry `@ApiProperty` metadata; the class is marked `@ResponseEntity('Issue')` (its
 * name in the OpenAPI document); handlers declare it (`@ApiOkResponse({ type: IssueResponse })`, or the
 * shorthands below), and openapi.builder.ts generates the document from those. Response schemas are
 * closed (`additionalProperties: false`): a field the class does not declare fails expectSchema
 * (test/helpers/schema.ts). The classes are never instantiated: presenters build plain objects in the
 * wire order, the class only types them.
 */

/** Names of the schemas that come from response classes (closed in the document). */
export const RESPONSE_ENTITIES = new Set<string>();
/** The response classes (all of them go into the document, used by a handler or nested in another). */
export const RESPONSE_CLASSES: Type<unknown>[] = [];

/** Marks a response class and names its schema. */
export function ResponseEntity(name: string, description?: string): ClassDecorator {
  return (target) => {
    if (RESPONSE_ENTITIES.has(name)) throw new Error(`two response classes are named ${name}`);
    RESPONSE_ENTITIES.add(name);
    RESPONSE_CLASSES.push(target as unknown as Type<unknown>);
    ApiSchema({ name, ...(description ? { description } : {}) })(target);
  };
}

/** The pagination headers every list answers (components.headers of the document). */
export const PAGINATION_HEADER_NAMES = ['Link', 'X-Total', 'X-Total-Pages', 'X-Per-Page', 'X-Page', 'X-Next-Page', 'X-Prev-Page'] as const;
const PAGINATION_HEADERS = Object.fromEntries(PAGINATION_HEADER_NAMES.map((h) => [h, { $ref: `#/components/headers/${h}` }]));

/** A paginated list of `type` (the 200 of a GET list), with its Link and X-* headers. */
export function ApiPageResponse(type: Type<unknown>, description = 'one page of the list'): MethodDecorator {
  return ApiOkResponse({ type, isArray: true, description, headers: PAGINATION_HEADERS });
}

/** A paginated list whose items are one of `types` (the viewer decides which view each item is). */
export function ApiPageOneOfResponse(types: Type<unknown>[], description: string): MethodDecorator {
  const items = { oneOf: types.map((t) => ({ $ref: getSchemaPath(t) })) };
  return ApiOkResponse({ schema: { type: 'array', items }, description, headers: PAGINATION_HEADERS });
}

/** One of `types` (the viewer decides which view). */
export function ApiOneOfResponse(types: Type<unknown>[], description: string, status = 200): MethodDecorator {
  return ApiResponse({ status, schema: { oneOf: types.map((t) => ({ $ref: getSchemaPath(t) })) }, description });
}

/** `type`, or `null` (a DELETE of something already gone). */
export function ApiNullableResponse(type: Type<unknown>, description: string): MethodDecorator {
  return ApiOkResponse({ schema: { allOf: [{ $ref: getSchemaPath(type) }], nullable: true }, description });
}

/** The POST answers `type` with 201 (the route's own status). */
export function ApiCreated(type: Type<unknown>, description = ''): MethodDecorator {
  return ApiCreatedResponse({ type, description });
}

/** A plain-text body (raw files, traces). */
export function ApiTextResponse(description: string, status = 200): MethodDecorator {
  return ApiResponse({ status, description, content: { 'text/plain': { schema: { type: 'string' } } } });
}

/** A binary body (archives, artifacts). */
export function ApiBinaryResponse(description: string, status = 200): MethodDecorator {
  return ApiResponse({ status, description, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } });
}

/** `304 Not Modified` when already in the requested state (subscriptions, stars), besides `ok`. */
export function ApiNotModified(): MethodDecorator {
  return ApiResponse({ status: 304, description: 'already in that state: nothing changed' });
}

/** The JSON value `true`. */
export function ApiTrueResponse(status = 200): MethodDecorator {
  return ApiResponse({ status, description: 'the JSON value `true`', schema: { type: 'boolean', enum: [true] } });
}

/** `{}`: an answer with nothing to say (OAuth revoke). */
@ResponseEntity('Empty', 'An empty JSON object.')
export class EmptyResponse {}
