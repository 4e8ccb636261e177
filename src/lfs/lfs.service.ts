import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, AppConfig } from '../config/config';
import { DomainError, NotFound } from '../common/errors/domain-errors';
import { ProjectRef } from '../common/params/refs';
import { Visibility } from '../common/policy/policy';
import { Transactions } from '../database/transactions';
import { GitAccess, GitAccessDenied, GitCaller } from '../git-access/git-access.service';
import { Project } from '../projects/project.entity';
import { LFS_OID, LfsStorage, LfsUploadMismatch } from './lfs-storage';
import { LfsRepository } from './lfs.repository';

export type LfsOperation = 'download' | 'upload';

/** An error of the LFS API: 8.17's `{message, documentation_url}` (LfsRequest#render_lfs_*). */
export class LfsError extends DomainError {
  constructor(
    readonly status: number,
    private readonly text: string,
    private readonly helpUrl: string,
  ) {
    super(text);
  }
  body() {
    return { message: this.text, documentation_url: this.helpUrl };
  }
}

/** 8.17's texts (app/controllers/concerns/lfs_request.rb, lfs_api_controller.rb). */
export const LFS_TEXTS = {
  disabled: 'Git LFS is not enabled on this GitLab server, contact your admin.',
  forbidden: 'Access forbidden. Check your access level.',
  notFound: 'Not found.',
  missing: "Object does not exist on the server or you don't have permissions to access it",
  batchOnly: 'Server supports batch API only, please update your Git LFS client to version 1.0.1 and up.',
} as const;

/** One object of a batch request as the client sent it. */
export interface LfsBatchObject {
  oid: unknown;
  size: unknown;
  [k: string]: unknown;
}

export interface LfsAction {
  href: string;
  header: { Authorization?: string };
}

export interface LfsBatchResult {
  oid: unknown;
  size: unknown;
  authenticated?: boolean;
  actions?: { download?: LfsAction; upload?: LfsAction };
  error?: { code: number; message: string };
}

/** An authorised LFS request: the project, and the URL its objects are served at. */
export interface LfsGrant {
  project: Project;
  repoUrl: string;
}

/**
 * Git LFS as GitLab CE 8.17 (`Projects::LfsApiController`, `LfsStorageController`, `LfsRequest`): the batch
 * API (basic transfer) and the object store, authorised as git over HTTP — a reporter (or anyone who may
 * download the code, a CI build of the project, a deploy key's LFS token) downloads, a developer (push
 * access) uploads, and what the caller may not read answers 404. A project serves the objects linked to
 * it (uploaded through it, or its fork source's when it was forked) and no other, whatever oid is asked.
 */
@Injectable()
export class LfsService {
  private readonly enabled: boolean;
  private readonly maxObjectSize: number;
  readonly helpUrl: string;
  private readonly externalUrl: string;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'lfs' | 'externalUrl'>,
    private readonly access: GitAccess,
    private readonly repo: LfsRepository,
    private readonly storage: LfsStorage,
    private readonly tx: Transactions,
  ) {
    this.enabled = config.lfs.enabled;
    this.maxObjectSize = config.lfs.maxObjectSize;
    this.externalUrl = config.externalUrl;
    this.helpUrl = `${config.externalUrl}/help`;
  }

  private error(status: 403 | 404 | 413 | 422 | 501, text: string): LfsError {
    return new LfsError(status, text, this.helpUrl);
  }

  /**
   * 8.17's require_lfs_enabled! and lfs_check_access!: `operation` allowed on the project `ref` names,
   * else 404 `Not found.` when the caller may not read it and 403 `Access forbidden. …` when it may.
   * `operation` undefined (an operation the batch API does not know) is never allowed.
   */
  async authorize(caller: GitCaller, ref: ProjectRef, repoPath: string, operation: LfsOperation | undefined): Promise<LfsGrant> {
    if (!this.enabled) throw this.error(501, LFS_TEXTS.disabled);
    let project: Project;
    try {
      ({ project } = await this.access.authorize(caller, ref, operation === 'upload' ? 'git-receive-pack' : 'git-upload-pack'));
    } catch (e) {
      if (e instanceof NotFound) throw this.error(404, LFS_TEXTS.notFound);
      if (e instanceof GitAccessDenied) throw this.error(403, LFS_TEXTS.forbidden);
      throw e;
    }
    // a deploy key's token only reads (8.17: read_authentication_abilities), and the project may have LFS off
    if (!operation || (operation === 'upload' && caller.deployKey) || project.lfsEnabled === false) throw this.error(403, LFS_TEXTS.forbidden);
    return { project, repoUrl: `${this.externalUrl}/${repoPath}.git` };
  }

  /** The batch API's answer (8.17's download_objects! / upload_objects!; objects checked first: none is a 404). */
  async batch(grant: LfsGrant, operation: LfsOperation, objects: LfsBatchObject[], authorization: string | undefined): Promise<{ objects: LfsBatchResult[] }> {
    if (!objects.length) throw this.error(404, LFS_TEXTS.notFound);
    const valid = (o: LfsBatchObject) => typeof o.oid === 'string' && LFS_OID.test(o.oid) && Number.isSafeInteger(o.size) && (o.size as number) >= 0;
    const linked = await this.repo.linkedOids(
      grant.project.id,
      objects.filter(valid).map((o) => o.oid as string),
    );
    const header = authorization ? { Authorization: authorization } : {};
    // 8.17: `authenticated: true` where a guest may download the code (a public project)
    const open = grant.project.visibilityLevel === Visibility.PUBLIC;
    const results = objects.map((o): LfsBatchResult => {
      const base = { ...o, oid: o.oid, size: o.size };
      if (!valid(o)) return { ...base, error: { code: 422, message: 'Invalid object: oid must be 64 hexadecimal digits and size a number of bytes' } };
      const oid = o.oid as string;
      if (operation === 'download') {
        if (!linked.has(oid)) return { ...base, error: { code: 404, message: LFS_TEXTS.missing } };
        return { ...base, actions: { download: { href: `${grant.repoUrl}/gitlab-lfs/objects/${oid}`, header } }, ...(open ? { authenticated: true } : {}) };
      }
      if (linked.has(oid)) return base;
      if (this.maxObjectSize && (o.size as number) > this.maxObjectSize) {
        return { ...base, error: { code: 413, message: `Object is larger than the limit of ${this.maxObjectSize} bytes` } };
      }
      return { ...base, actions: { upload: { href: `${grant.repoUrl}/gitlab-lfs/objects/${oid}/${o.size as number}`, header } } };
    });
    return { objects: results };
  }

  /**
   * Stores an uploaded object (8.17's upload_finalize): its bytes streamed and checked against `oid` and
   * `size` before it is kept, then linked to the project. A wrong hash or size: 422 `Unprocessable entity`
   * (8.17's text), nothing kept.
   */
  async upload(grant: LfsGrant, oid: string, size: number, body: Readable): Promise<void> {
    if (this.maxObjectSize && size > this.maxObjectSize) throw this.error(413, `Object is larger than the limit of ${this.maxObjectSize} bytes`);
    let staged: Awaited<ReturnType<LfsStorage['stage']>>;
    try {
      staged = await this.storage.stage(body, oid, size);
    } catch (e) {
      if (e instanceof LfsUploadMismatch) throw this.error(422, 'Unprocessable entity');
      throw e; // LfsUploadAborted: nobody to answer, nothing kept
    }
    try {
      await this.tx.run(async (tx) => {
        await this.repo.lockOid(tx, oid);
        await staged.place();
        await this.repo.link(tx, grant.project.id, oid, size);
      });
    } finally {
      await staged.discard();
    }
  }

  /** The object's file, when the project may serve it (linked to it) and it is there; else 404 `Not found.`. */
  async download(grant: LfsGrant, oid: string) {
    const linked = await this.repo.linkedOids(grant.project.id, [oid]);
    const file = linked.has(oid) ? await this.storage.open(oid) : undefined;
    if (!file) throw this.error(404, LFS_TEXTS.notFound);
    return file;
  }

  notFound(): LfsError {
    return this.error(404, LFS_TEXTS.notFound);
  }

  batchOnly(): LfsError {
    return this.error(501, LFS_TEXTS.batchOnly);
  }
}
