import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/**
 * Conditional GETs of lists (as GitLab answers its pollers): the list's JSON is serialised here
 * once, its weak ETag is the SHA-1 of those bytes, and Express's `res.send` answers 304 with no body
 * when the request's `If-None-Match` holds it (`req.fresh`).
 *
 * The tag is computed from the caller's own answer, so it changes whenever anything the caller is
 * shown changes, a change the caller cannot see leaves it as it was, and two callers share a tag only
 * when they are shown the very same bytes (a tag is never a key into anyone else's answer). It saves
 * the transfer, not the server's work: the list is read and presented as for a 200. (A tag that
 * spared the work would be a per-caller key invalidated on every change the caller could see, across
 * instances — GitLab's Gitlab::EtagCaching — and is not done here.) Express's own ETag stays off for
 * every other answer (app.factory.ts), so nothing else pays for a hash.
 */
export function sendListWithEtag(req: Request, res: Response, items: unknown[]): unknown {
  if (req.method !== 'GET' && req.method !== 'HEAD') return items;
  const body = JSON.stringify(items);
  res.setHeader('ETag', `W/"${createHash('sha1').update(body).digest('base64url')}"`);
  res.setHeader('Content-Type', 'application/json');
  return body;
}
