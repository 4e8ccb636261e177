import { Injectable } from '@nestjs/common';
import { NotFound, RecordNotFound } from '../common/errors/domain-errors';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { ProjectRef } from '../common/params/refs';
import { Transactions, Tx } from '../database/transactions';
import { ProjectResolver } from '../projects/project-resolver.service';
import { KeysService, validKey } from '../users/keys.service';
import type { Caller } from '../common/caller/caller';
import { DeployKeysProject } from './deploy-keys-project.entity';
import { DeployKeyRow, DeployKeysRepository } from './deploy-keys.repository';
import { CreateDeployKeyDto } from './dto/deploy-keys.dto';

export type { DeployKeyRow };

/**
 * Deploy keys (GitLab 8.17's `DeployKey`, v3's lib/api/v3/deploy_keys.rb): SSH keys no user owns, each
 * enabled on one or more projects, which they may fetch (and push to, with `can_push`) over SSH and
 * nothing else. Managed by the project's masters (`admin_project`: 404 for who cannot see the project,
 * 403 below master); `GET /deploy_keys` lists them all for administrators. A key disabled on its last
 * project is removed (8.17's orphaned private keys), so its fingerprint is free again.
 */
@Injectable()
export class DeployKeysService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly records: DeployKeysRepository,
    private readonly keys: KeysService,
    private readonly tx: Transactions,
  ) {}

  /** `GET /deploy_keys` (the route is `@Admin()`). */
  async all(q: PageParams): Promise<Paginated<DeployKeyRow>> {
    return paginateAll(await this.records.all(), q, { whole: true });
  }

  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<DeployKeyRow>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    return paginateAll(await this.records.ofProject(project.id), q, { whole: true });
  }

  /** A key enabled on the project; another id is 8.17's `404 Not found` (its `find` missed). */
  async get(user: Caller, ref: ProjectRef, keyId: number): Promise<DeployKeyRow> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const key = await this.records.inProject(project.id, { id: keyId });
    if (!key) throw new RecordNotFound();
    return key;
  }

  /**
   * `POST .../deploy_keys`, as 8.17: the key when it is already enabled here; a deploy key the caller
   * can reach (enabled on a project they are a member of; any, for an administrator) is enabled here;
   * otherwise a new deploy key. A fingerprint stored as a user's key (or as a deploy key out of the
   * caller's reach) is `400 {"fingerprint":["has already been taken"],…}`, nothing written.
   */
  async add(user: Caller, ref: ProjectRef, dto: CreateDeployKeyDto): Promise<DeployKeyRow> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const parsed = validKey(dto.title, dto.key);
    return this.tx.run(async (tx) => {
      const here = await this.records.inProject(project.id, { fingerprint: parsed.fingerprint }, tx);
      if (here) return here;
      const reachable = await this.records.accessible(user, { fingerprint: parsed.fingerprint }, tx);
      if (reachable) {
        await this.records.enable(tx, reachable.id, project.id);
        return reachable;
      }
      const key = await this.keys.insertDeployKey(tx, { title: dto.title, key: parsed, canPush: dto.can_push ?? false });
      await this.records.enable(tx, key.id, project.id);
      return { id: key.id, title: key.title, key: key.key, fingerprint: key.fingerprint, canPush: key.canPush, createdAt: key.createdAt };
    });
  }

  /** `POST .../deploy_keys/:key_id/enable`: a key the caller can reach, else `404 Deploy Key Not Found`. */
  async enable(user: Caller, ref: ProjectRef, keyId: number): Promise<DeployKeyRow> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    return this.tx.run(async (tx) => {
      const key = await this.records.accessible(user, { id: keyId }, tx);
      if (!key) throw new NotFound('Deploy Key');
      await this.records.enable(tx, key.id, project.id);
      return key;
    });
  }

  /** `DELETE .../deploy_keys/:key_id/disable`: the key, no longer enabled here. */
  async disable(user: Caller, ref: ProjectRef, keyId: number): Promise<DeployKeyRow> {
    return (await this.unlink(user, ref, keyId)).key;
  }

  /** `DELETE .../deploy_keys/:key_id`: the link removed (v3's answer). */
  async remove(user: Caller, ref: ProjectRef, keyId: number): Promise<DeployKeysProject> {
    return (await this.unlink(user, ref, keyId)).link;
  }

  private async unlink(user: Caller, ref: ProjectRef, keyId: number): Promise<{ key: DeployKeyRow; link: DeployKeysProject }> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    return this.tx.run(async (tx) => {
      const key = await this.records.inProject(project.id, { id: keyId }, tx);
      const link = key && (await this.records.disable(tx, key.id, project.id));
      if (!key || !link) throw new NotFound('Deploy Key');
      await this.removeIfOrphaned(tx, key.id);
      return { key, link };
    });
  }

  private async removeIfOrphaned(tx: Tx, keyId: number): Promise<void> {
    if (!(await this.records.enabledAnywhere(tx, keyId))) await this.keys.deleteDeployKey(tx, keyId);
  }

  /**
   * Git access of a deploy key to a project: its write access when it is enabled there, undefined when
   * it is not (the project is then not found for it). One statement, asked on every command.
   */
  accessTo(keyId: number, projectId: number): Promise<{ canPush: boolean } | undefined> {
    return this.records.access(keyId, projectId);
  }

  /** Of `projectIds`, those the key is still enabled on. */
  enabledOn(keyId: number, projectIds: number[]): Promise<Set<number>> {
    return this.records.enabledOn(keyId, projectIds);
  }
}
