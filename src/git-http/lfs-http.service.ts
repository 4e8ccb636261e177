import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { BadRequest, PayloadTooLarge } from '../common/errors/domain-errors';
import { parseProjectRef } from '../common/params/refs';
import { LFS_OID, LfsUploadAborted } from '../lfs/lfs-storage';
import { LfsBatchObject, LfsError, LfsGrant, LfsOperation, LfsService } from '../lfs/lfs.service';
import { GitHttpService, unauthorized } from './git-http.service';

/** The batch request is read whole, up to this size (the client sends at most a few hundred objects). */
const MAX_BATCH_BYTES = 10 * 1024 * 1024;
const LFS_JSON = 'application/vnd.git-lfs+json';

/** Reads the JSON body of a batch request (git paths are not parsed by the API's body parser). */
async function readJson(req: Request): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BATCH_BYTES) throw new PayloadTooLarge();
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BadRequest('malformed JSON body');
  }
}

/**
 * The LFS routes' door: authenticates as git over HTTP (GitHttpService.callerOf: password, private token,
 * `gitlab-ci-token`, an LFS token), lets LfsService decide, and writes the answers. An anonymous caller
 * refused (404 or 403) is asked for credentials instead (401), as 8.17's GitHttpClientController.
 */
@Injectable()
export class LfsHttpService {
  constructor(
    private readonly gitHttp: GitHttpService,
    private readonly lfs: LfsService,
  ) {}

  private async grant(req: Request, namespace: string, repo: string, operation: LfsOperation | undefined): Promise<LfsGrant> {
    const caller = await this.gitHttp.callerOf(req);
    const path = `${namespace}/${repo.replace(/\.git$/i, '')}`;
    try {
      return await this.lfs.authorize(caller, parseProjectRef(path), path, operation);
    } catch (e) {
      const anonymous = !caller.user && !caller.build && !caller.deployKey;
      if (anonymous && e instanceof LfsError && (e.status === 403 || e.status === 404)) throw unauthorized();
      throw e;
    }
  }

  async batch(req: Request, res: Response, namespace: string, repo: string): Promise<void> {
    const body = await readJson(req);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('the batch request must be a JSON object');
    const { operation, objects } = body as { operation?: unknown; objects?: unknown };
    if (objects !== undefined && !Array.isArray(objects)) throw new BadRequest('objects must be an array');
    if (Array.isArray(objects) && objects.some((o) => !o || typeof o !== 'object' || Array.isArray(o)))
      throw new BadRequest('every object must be a JSON object');
    const op = operation === 'download' || operation === 'upload' ? operation : undefined;
    const grant = await this.grant(req, namespace, repo, op);
    const result = await this.lfs.batch(grant, op as LfsOperation, (objects ?? []) as LfsBatchObject[], req.headers.authorization);
    res.status(200).type(LFS_JSON).send(JSON.stringify(result));
  }

  async download(req: Request, res: Response, namespace: string, repo: string, oid: string): Promise<void> {
    if (!LFS_OID.test(oid)) throw this.lfs.notFound();
    const grant = await this.grant(req, namespace, repo, 'download');
    const file = await this.lfs.download(grant, oid);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', String(file.size));
    file.stream.on('error', () => res.destroy());
    res.on('close', () => file.stream.destroy());
    file.stream.pipe(res);
  }

  async upload(req: Request, res: Response, namespace: string, repo: string, oid: string, size: string): Promise<void> {
    if (!LFS_OID.test(oid) || !/^\d{1,16}$/.test(size)) throw this.lfs.notFound();
    const grant = await this.grant(req, namespace, repo, 'upload');
    try {
      await this.lfs.upload(grant, oid, Number(size), req);
    } catch (e) {
      if (e instanceof LfsUploadAborted) return; // nobody to answer; nothing was kept
      throw e;
    }
    res.status(200).end();
  }

  async batchOnly(req: Request, namespace: string, repo: string): Promise<never> {
    await this.grant(req, namespace, repo, 'download');
    throw this.lfs.batchOnly();
  }
}
