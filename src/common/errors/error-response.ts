import type { Response } from 'express';

/** Writes an error response; used by the exception filter and by pre-routing middleware. */
export function writeErrorResponse(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (body === undefined) {
    res.status(status).end();
    return;
  }
  const json = JSON.stringify(body);
  res.status(status);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function statusMessage(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
}

const withStatus = (status: number, text: string): string => (/^\d{3}( |$)/.test(text) ? text : `${status} ${text}`);

/**
 * Errors rule 3 (spec-decisions 32): an error's `message`, when it is a string, begins with the status
 * and a space (`409 Label already exists`), and the body is an object with `message` — a bare array
 * or string body (GitLab 8's `["Your project limit is ..."]`) becomes one. A field map (validation,
 * rule 2) stays a map. Bodies that are not GitLab messages are left as they are: OAuth's `{error,
 * error_description}`, the runner API's `{}` and its trace `{error}` bodies.
 */
export function errorBody(status: number, body: unknown): unknown {
  if (body === undefined || body === null || status < 400) return body;
  if (typeof body === 'string') return { message: withStatus(status, body) };
  if (Array.isArray(body)) return { message: withStatus(status, body.map(String).join(', ')) };
  if (typeof body !== 'object' || !('message' in body)) return body;
  const message = body.message;
  if (typeof message === 'string') return { ...body, message: withStatus(status, message) };
  if (Array.isArray(message)) return { ...body, message: withStatus(status, message.map(String).join(', ')) };
  return body;
}
