import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Public } from '../common/caller/caller';
import { APP_CONFIG, AppConfig } from '../config/config';
import { VERSION } from '../health/health.service';

/** This server's own name and version (package.json, beside src/ and dist/). */
function serverVersion(): { name: string; version: string } {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { name?: string; version?: string };
    return { name: pkg.name ?? 'gitlab-v3-server', version: pkg.version ?? 'unknown' };
  } catch {
    return { name: 'gitlab-v3-server', version: 'unknown' };
  }
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An HTML page with no script, image or outside resource: only its own inline styles may apply, it
 * may not be framed, and it sends no Referer. (The API's own headers — X-Content-Type-Options,
 * X-Request-Id — come from the HTTP pipeline, as on every response.)
 */
const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** `GET /` (and HEAD): what this server is, where its API document is, how to sign in and clone. */
@Controller()
export class HomeController {
  private readonly page: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.page = render(config);
  }

  @Public()
  @Get()
  home(@Res() res: Response): void {
    for (const [k, v] of Object.entries(PAGE_HEADERS)) res.setHeader(k, v);
    res.setHeader('Content-Length', Buffer.byteLength(this.page));
    res.status(200).end(res.req.method === 'HEAD' ? undefined : this.page);
  }
}

function render(config: AppConfig): string {
  const { name, version } = serverVersion();
  const url = escape(config.externalUrl);
  const ssh = config.ssh.enabled ? `\n<pre>git clone ${escape(config.sshUrlPrefix)}&lt;namespace&gt;/&lt;project&gt;.git</pre>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(name)} ${escape(version)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}</style>
</head>
<body>
<h1>${escape(name)} ${escape(version)}</h1>
<p>A source-code hosting and CI server speaking GitLab's REST API v3 (as GitLab ${escape(VERSION.version)}) and the CI runner API v1. It has no web interface: use the API, git, or a GitLab 8 client.</p>
<h2>API</h2>
<p>The API is under <code>${url}/api/v3</code>; its OpenAPI document is <a href="/api/v3/openapi.json"><code>${url}/api/v3/openapi.json</code></a>.</p>
<h2>Sign in</h2>
<p>Exchange a login and password for a private token, then send it in the <code>PRIVATE-TOKEN</code> header:</p>
<pre>curl -X POST ${url}/api/v3/session -d login=root -d password=...
curl -H "PRIVATE-TOKEN: &lt;private_token&gt;" ${url}/api/v3/projects</pre>
<p>The administrator is <code>root</code>; on first start its password is <code>ROOT_PASSWORD</code>, or a generated one in <code>$DATA_DIR/initial_root_password</code>.</p>
<h2>Clone</h2>
<p>Over HTTP, with your username and your password or private token:</p>
<pre>git clone ${url}/&lt;namespace&gt;/&lt;project&gt;.git</pre>${ssh ? `\n<p>Over SSH, with a key added to your account:</p>${ssh}` : ''}
</body>
</html>
`;
}
