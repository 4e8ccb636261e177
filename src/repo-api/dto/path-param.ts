/**
 * A route's rest-of-path parameter (`*branch`, `*tag`): branch and tag names may contain `/`, sent
 * raw or as `%2F`; Express 5 hands the raw form over as segments.
 */
export function joinedPath(parts: string | string[]): string {
  return Array.isArray(parts) ? parts.join('/') : parts;
}
