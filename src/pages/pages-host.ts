import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createReadStream, Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { NotFound } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { PagesSites } from './pages-sites';

const DEFAULT_404 =
  '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>404 Not Found</title></head>' +
  "<body><h1>404</h1><p>The page you're looking for could not be found.</p></body></html>\n";
const PROJECT_PATH = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const ROUTE = { path: 'pages' };

/** A site to serve from: its folder (resolved), and the URL prefix it is served under (`''` or `/project`). */
interface Site {
  root: string;
  prefix: string;
}

/** A Host header's name without its port (`[::1]:80` → `[::1]`). */
export function hostOnly(header: string): string {
  return header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
}

/**
 * The request path as decoded segments, or null when it is no path a site can have: a backslash, a
 * NUL or other control character (raw or %-encoded), a `.` or `..` segment (raw or %-encoded, as
 * `%2e%2e`), an encoded `/` inside a segment (`..%2f`), a malformed escape. A trailing `/` gives a
 * last empty segment (a folder was asked for).
 */
export function pathSegments(rawPath: string): string[] | null {
  if (!rawPath.startsWith('/')) return null;
  const raw = rawPath.slice(1).split('/');
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    let s: string;
    try {
      s = decodeURIComponent(raw[i]);
    } catch {
      return null;
    }
    // eslint-disable-next-line no-control-regex -- control characters (NUL among them) are refused
    if (/[\\/\x00-\x1f\x7f]/.test(s) || s === '.' || s === '..') return null;
    if (s === '' && i !== raw.length - 1) return null; // `//` inside a path
    out.push(s);
  }
  return out;
}

/**
 * GitLab Pages on this server (what GitLab 8.17 left to its `gitlab-pages` daemon): a request whose
 * host is `<namespace>.<PAGES_DOMAIN>` (any case, any port) is answered here, before anything of the
 * API — no route, guard, token or cookie of the API is reached on a Pages host, and PAGES_DOMAIN is
 * never the API's host or a parent of it (checked at boot, config/pages-config.ts). The host
 * PAGES_DOMAIN itself is answered 404 here too.
 *
 * `http://<namespace>.<domain>/<project>/…` is the project's site; anything else on that host is the
 * site of the project named `<namespace>.<domain>` in the namespace (the namespace's own site). Files
 * carry their type by extension, folders serve their `index.html` (`/project` and folders without a
 * trailing slash redirect to it), there is no listing, and a missing file serves the site's `404.html`
 * (for a project site, then the namespace site's) with status 404. As in 8.17 CE, sites are public
 * whatever the project's visibility (8.17 CE had no Pages access control).
 */
@Injectable()
export class PagesHost {
  constructor(
    private readonly sites: PagesSites,
    private readonly projects: ProjectResolver,
    private readonly logger: Logger,
  ) {}

  /** The namespace a host names under PAGES_DOMAIN, `''` for PAGES_DOMAIN itself, undefined for another host. */
  namespaceOf(hostname: string): string | undefined {
    const domain = this.sites.pages.domain;
    if (!domain) return undefined;
    const host = hostname.toLowerCase().replace(/\.$/, '');
    if (host === domain) return '';
    return host.endsWith(`.${domain}`) ? host.slice(0, -(domain.length + 1)) : undefined;
  }

  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      // the Host header, and X-Forwarded-Host where TRUST_PROXY believes it (req.hostname): either one
      // under PAGES_DOMAIN makes it a Pages request, so no forwarded header can bring the API onto a site's origin
      const namespace = this.namespaceOf(hostOnly(req.headers.host ?? '')) ?? this.namespaceOf(req.hostname ?? '');
      if (namespace === undefined) return next();
      (req as Request & { route?: { path: string } }).route = ROUTE; // one metrics label for every site request
      res.setHeader('X-Frame-Options', 'SAMEORIGIN');
      this.serve(req, res, namespace).catch((e: unknown) => {
        this.logger.error('pages: request failed', { error: e instanceof Error ? e.message : String(e) });
        if (!res.headersSent) this.plain(res, 500, 'Internal Server Error');
        else res.destroy();
      });
    };
  }

  private async serve(req: Request, res: Response, namespace: string): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return this.plain(res, 405, 'Method Not Allowed');
    }
    const q = req.url.indexOf('?');
    const rawPath = q === -1 ? req.url : req.url.slice(0, q);
    const segments = pathSegments(rawPath);
    if (segments === null) return this.plain(res, 400, 'Bad Request');
    if (!namespace) return this.notFound(req, res, []);
    const domain = this.sites.pages.domain!;
    const groupSite = await this.site(namespace, `${namespace}.${domain}`, '');
    const first = segments[0];
    if (first && PROJECT_PATH.test(first) && first.toLowerCase() !== `${namespace}.${domain}`) {
      const projectSite = await this.site(namespace, first, `/${first}`);
      if (projectSite) {
        if (segments.length === 1) return this.redirect(res, `/${encodeURIComponent(first)}/`);
        return this.file(req, res, projectSite, segments.slice(1), [projectSite, groupSite]);
      }
    }
    if (groupSite) return this.file(req, res, groupSite, segments, [groupSite]);
    return this.notFound(req, res, []);
  }

  /** The deployed site of a project, or null (no such project, or nothing published). */
  private async site(namespace: string, path: string, prefix: string): Promise<Site | null> {
    let project: Project;
    try {
      project = await this.projects.find({ namespace, path });
    } catch (e) {
      if (e instanceof NotFound) return null;
      throw e;
    }
    const dir = this.sites.siteDir(project.id);
    const root = await realpath(dir).catch(() => null);
    if (!root) return null;
    return { root, prefix };
  }

  /** Serves `segments` of `site` (a folder: its index.html), or the 404 page of the first of `fallbacks` that has one. */
  private async file(req: Request, res: Response, site: Site, segments: string[], fallbacks: (Site | null)[]): Promise<void> {
    const wantsFolder = segments.length === 0 || segments[segments.length - 1] === '';
    const rel = segments.filter((s) => s !== '');
    let found = await this.lookup(site, rel);
    if (found?.stats.isDirectory()) {
      if (!wantsFolder) {
        const base = [site.prefix, ...rel.map(encodeURIComponent)].join('/');
        return this.redirect(res, `${base}/`);
      }
      found = await this.lookup(site, [...rel, 'index.html']);
    } else if (found && wantsFolder) found = null; // `file.html/` names no folder
    if (found?.stats.isFile()) return this.send(req, res, 200, found.path, found.stats);
    return this.notFound(req, res, fallbacks);
  }

  /** The real file or folder `rel` names inside the site, or null (missing, or resolving outside it). */
  private async lookup(site: Site, rel: string[]): Promise<{ path: string; stats: Stats } | null> {
    const real = await realpath(join(site.root, ...rel)).catch(() => null);
    if (!real || (real !== site.root && !real.startsWith(site.root + sep))) return null;
    const stats = await stat(real).catch(() => null);
    return stats ? { path: real, stats } : null;
  }

  private async notFound(req: Request, res: Response, fallbacks: (Site | null)[]): Promise<void> {
    for (const site of fallbacks) {
      if (!site) continue;
      const page = await this.lookup(site, ['404.html']);
      if (page?.stats.isFile()) return this.send(req, res, 404, page.path, page.stats);
    }
    res.statusCode = 404;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(DEFAULT_404));
    res.end(req.method === 'HEAD' ? undefined : DEFAULT_404);
  }

  private async send(req: Request, res: Response, status: number, path: string, stats: Stats): Promise<void> {
    const etag = `W/"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
    const modified = new Date(Math.floor(stats.mtimeMs / 1000) * 1000);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', modified.toUTCString());
    res.setHeader('Cache-Control', 'max-age=600');
    if (status === 200 && this.fresh(req, etag, modified)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = status;
    res.type(extname(path) || 'application/octet-stream');
    res.setHeader('Content-Length', stats.size);
    if (req.method === 'HEAD' || stats.size === 0) {
      res.end();
      return;
    }
    await pipeline(createReadStream(path), res).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ERR_STREAM_PREMATURE_CLOSE') throw e; // the client went away
    });
  }

  private fresh(req: Request, etag: string, modified: Date): boolean {
    const inm = req.headers['if-none-match'];
    if (inm) return inm.split(',').some((t) => t.trim() === etag || t.trim() === '*');
    const ims = req.headers['if-modified-since'];
    if (ims) {
      const since = Date.parse(ims);
      return !Number.isNaN(since) && modified.getTime() <= since;
    }
    return false;
  }

  private redirect(res: Response, location: string): void {
    res.statusCode = 302;
    res.setHeader('Location', location);
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`Found. Redirecting to ${location}`);
  }

  private plain(res: Response, status: number, text: string): void {
    res.statusCode = status;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(text);
  }
}
