/**
 * Reads the endpoint tables of the spec (api-v3.md): every `| METHOD | path | ... |` row, with the
 * table's base applied (`Base /projects/:id/snippets.`, the three note families, `.../` rows of the
 * merge request table, the runner API's `/ci/api/v1`). Endpoints come back as `METHOD /path` with
 * GitLab's `:params` (e.g. `GET /projects/:id/issues/:issue_id`).
 */
export function parseSpecEndpoints(markdown: string): string[] {
  const out: string[] = [];
  let bases: string[] = [''];
  let prefix = '';
  let firstPath: string | undefined;
  let suffixTable = false;
  for (const line of markdown.split('\n')) {
    const heading = /^###\s+(.*)$/.exec(line);
    if (heading) {
      bases = [''];
      prefix = /ci\/api\/v1/.test(heading[1]) ? '/ci/api/v1' : '';
      firstPath = undefined;
      suffixTable = false;
      continue;
    }
    const base = /^Base (\/\S+?)\.?$/.exec(line.trim());
    if (base) bases = [base[1]];
    if (/^Three families/.test(line)) bases = [...line.matchAll(/(\/projects\/\S+?\/notes)/g)].map((m) => m[1]);
    if (/^\|\s*Method\s*\|/.test(line)) {
      suffixTable = /Path suffix/.test(line);
      continue;
    }
    const row = /^\|\s*(GET|POST|PUT|DELETE|PATCH)\s*\|\s*([^|]*?)\s*\|/.exec(line);
    if (!row) continue;
    const [, method, raw] = row;
    if (suffixTable) {
      const suffix = raw === '(none)' ? '' : raw;
      for (const b of bases) out.push(`${method} ${prefix}${b}${suffix}`);
      continue;
    }
    let path = raw;
    if (path.startsWith('...')) {
      if (!firstPath) throw new Error(`spec row "${line}" has no base path`);
      path = firstPath + path.slice(3);
    } else if (firstPath === undefined) {
      firstPath = path;
    }
    out.push(`${method} ${prefix}${path}`);
  }
  return [...new Set(out)];
}

/** `GET /projects/:id/issues/:issue_id` and `GET /projects/{id}/issues/{issue_id}` → `GET /projects/{}/issues/{}`. */
export function endpointShape(endpoint: string): string {
  return endpoint.replace(/:\w+/g, '{}').replace(/\{\w+\}/g, '{}');
}
