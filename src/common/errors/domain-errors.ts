/**
 * Typed errors thrown by services. One exception filter (errors.filter.ts) turns them into
 * GitLab v3 bodies; nothing below the controllers throws HTTP exceptions.
 */
export type ValidationMap = { [field: string]: string[] | ValidationMap };

export abstract class DomainError extends Error {
  abstract readonly status: number;
  /** The JSON body; `undefined` sends no body (304). */
  abstract body(): unknown;
  headers(): Record<string, string> {
    return {};
  }
}

/** `404 <Resource> Not Found`, or `404 Not Found` with no resource. */
export class NotFound extends DomainError {
  readonly status = 404;
  constructor(
    readonly resource?: string,
    private readonly detail?: string,
  ) {
    super(resource ? `${resource} Not Found` : 'Not Found');
  }
  body() {
    const base = this.resource ? `404 ${this.resource} Not Found` : '404 Not Found';
    return { message: this.detail ? `${base}${this.detail}` : base };
  }
}

/** `404 Not found`, lowercase: GitLab's answer to a record lookup that missed (`ActiveRecord::RecordNotFound`, gitlab-compat.md). */
export class RecordNotFound extends DomainError {
  readonly status = 404;
  constructor() {
    super('Not found');
  }
  body() {
    return { message: '404 Not found' };
  }
}

/** `400 (Bad request) "<attr>" not given`. */
export class MissingAttribute extends DomainError {
  readonly status = 400;
  constructor(readonly attribute: string) {
    super(`${attribute} not given`);
  }
  body() {
    return { message: `400 (Bad request) "${this.attribute}" not given` };
  }
}

/** A parameter of the wrong type or format: `400 (Bad request) "<attr>" is invalid`. */
export class InvalidAttribute extends DomainError {
  readonly status = 400;
  constructor(readonly attribute: string) {
    super(`${attribute} is invalid`);
  }
  body() {
    return { message: `400 (Bad request) "${this.attribute}" is invalid` };
  }
}

/** Field-level validation failure: 400 with `message` as a map of field → messages. */
export class ValidationFailed extends DomainError {
  readonly status = 400;
  constructor(readonly errors: ValidationMap) {
    super('validation failed');
  }
  body() {
    return { message: this.errors };
  }
}

/** Any other 400: `400 Bad request - <reason>`. */
export class BadRequest extends DomainError {
  readonly status = 400;
  constructor(readonly reason?: string) {
    super(reason ?? 'bad request');
  }
  body() {
    return { message: this.reason ? `400 Bad request - ${this.reason}` : '400 Bad request' };
  }
}

/**
 * A request GitLab refuses with its own sentence (its `render_api_error!(text, 400)`): `400 <text>`,
 * e.g. `400 Branch already exists`, `400 You are not allowed to push into this branch`.
 */
export class Rejected extends DomainError {
  readonly status = 400;
  constructor(readonly sentence: string) {
    super(sentence);
  }
  body() {
    return { message: withStatus(400, this.sentence) };
  }
}

export class Unauthorized extends DomainError {
  readonly status = 401;
  constructor() {
    super('unauthorized');
  }
  body() {
    return { message: '401 Unauthorized' };
  }
}

/** `403 Forbidden`, `403 Forbidden - <reason>`, or an exact message (sudo's uses a colon). */
export class Forbidden extends DomainError {
  readonly status = 403;
  constructor(
    readonly reason?: string,
    private readonly exactMessage?: string,
  ) {
    super(reason ?? 'forbidden');
  }
  body() {
    if (this.exactMessage) return { message: this.exactMessage };
    return { message: this.reason ? `403 Forbidden - ${this.reason}` : '403 Forbidden' };
  }
}

export class MethodNotAllowed extends DomainError {
  readonly status = 405;
  constructor(readonly reason?: string) {
    super(reason ?? 'method not allowed');
  }
  body() {
    return { message: this.reason ? `405 ${this.reason}` : '405 Method Not Allowed' };
  }
}

/**
 * 409 with GitLab's message after the status (`409 Email has already been taken`), or `409 Conflict`.
 * A conflict on named fields is the string naming the first of them (../shared/docs/spec-decisions.md #24 and #32):
 * `{name: ['has already been taken'], path: [...]}` → `409 Name has already been taken`.
 */
export class Conflict extends DomainError {
  readonly status = 409;
  constructor(readonly reason?: string | ValidationMap) {
    super(typeof reason === 'string' ? reason : 'conflict');
  }
  body() {
    if (this.reason === undefined) return { message: '409 Conflict' };
    if (typeof this.reason === 'string') return { message: /^409 /.test(this.reason) ? this.reason : `409 ${this.reason}` };
    const [field, errors] = Object.entries(this.reason)[0] ?? ['', []];
    const text = Array.isArray(errors) && errors.length ? errors[0] : 'has already been taken';
    const name = field.replace(/_id$/, '').replace(/_/g, ' ');
    return { message: name ? `409 ${name.charAt(0).toUpperCase()}${name.slice(1)} ${text}` : '409 Conflict' };
  }
}

/** `406 Not Acceptable`: the request cannot be done in the state the thing is in (cancelling an automatic merge that is not set). */
export class NotAcceptable extends DomainError {
  readonly status = 406;
  constructor() {
    super('not acceptable');
  }
  body() {
    return { message: '406 Not Acceptable' };
  }
}

/** `422 <text>`: a value that is well formed but cannot be used (a hook URL that is not valid). */
export class Unprocessable extends DomainError {
  readonly status = 422;
  constructor(readonly sentence: string) {
    super(sentence);
  }
  body() {
    return { message: withStatus(422, this.sentence) };
  }
}

/**
 * `503 <text>`: this request cannot be served now and should be tried again (a repository held by
 * another writer past the wait, a server shutting down). A dependency that failed is ServiceUnavailable.
 */
export class TryAgainLater extends DomainError {
  readonly status = 503;
  constructor(readonly sentence: string) {
    super(sentence);
  }
  body() {
    return { message: withStatus(503, this.sentence) };
  }
}

export class PayloadTooLarge extends DomainError {
  readonly status = 413;
  constructor() {
    super('payload too large');
  }
  body() {
    return { message: '413 Request Entity Too Large' };
  }
}

export class NotModified extends DomainError {
  readonly status = 304;
  constructor() {
    super('not modified');
  }
  body() {
    return undefined;
  }
}

export class TooManyRequests extends DomainError {
  readonly status = 429;
  /** `detail`, when given, follows `429 Too Many Requests - ` in the message. */
  constructor(
    readonly retryAfterSeconds: number,
    readonly detail?: string,
  ) {
    super('too many requests');
  }
  body() {
    return { message: this.detail ? `429 Too Many Requests - ${this.detail}` : '429 Too Many Requests' };
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/**
 * 503: something the request needs (the database) failed, not the request itself — e.g. a credential
 * could not be checked, which must never read as a wrong credential (401). The filter logs `failure`
 * with the request id; the client may retry.
 */
export class ServiceUnavailable extends DomainError {
  readonly status = 503;
  constructor(
    readonly detail: string,
    readonly failure: unknown,
  ) {
    super(detail);
  }
  body() {
    return { message: `503 Service Unavailable - ${this.detail}` };
  }
  override headers() {
    return { 'Retry-After': '5' };
  }
}

/** OAuth 2.0 error responses (RFC 6749 §5.2 / RFC 6750 §3.1) use `{error, error_description}`. */
export class OAuthError extends DomainError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
  body() {
    return { error: this.code, error_description: this.description };
  }
  override headers(): Record<string, string> {
    if (this.code !== 'invalid_token') return {};
    return {
      'WWW-Authenticate': `Bearer realm="The API", error="invalid_token", error_description="${this.description}"`,
    };
  }
}

/** Unique-constraint violation surfaced by the database (code 23505). */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const err = e as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = err?.code ?? err?.driverError?.code;
  const name = err?.constraint ?? err?.driverError?.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}

/** An error with a body of its own (the runner API's); the filter still puts the status before a string `message`. */
export class ErrorWithBody extends DomainError {
  constructor(
    readonly status: number,
    private readonly rawBody: unknown,
  ) {
    super(`${status}`);
  }
  body() {
    return this.rawBody;
  }
}

/** `text` with the status in front, unless it already starts with one (`404 Not found`). */
function withStatus(status: number, text: string): string {
  return /^\d{3}( |$)/.test(text) ? text : `${status} ${text}`;
}
