import { Injectable } from '@nestjs/common';
import { SecretsService } from '../common/crypto/secrets.service';
import { Conflict, Forbidden, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { Transactions, Tx } from '../database/transactions';
import { GitService } from '../git/git.service';
import { Namespace } from '../namespaces/namespace.entity';
import type { Caller } from '../common/caller/caller';
import { ProjectAttributes, rethrowTaken } from './project-rules';
import { Project } from './project.entity';
import { ProjectsRepository } from './projects.repository';

/**
 * A project's row, for creation and forks (ProjectCreation): the project limit, the namespace, taken
 * names (409), the runners token (sealed), and the repository made by `onCreated` before commit;
 * ProjectsService asks `assertFree` when a project is renamed.
 */
@Injectable()
export class ProjectInsertion {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly tx: Transactions,
    private readonly secrets: SecretsService,
    private readonly git: GitService,
    private readonly logger: Logger,
  ) {}

  /**
   * Inserts a project in a transaction: the namespace owner's row is locked so that the project
   * limit holds under concurrency, taken names give 409, and `onCreated` (the repository on disk)
   * runs before commit so a failure leaves nothing behind.
   */
  async insert(
    creator: Caller,
    namespace: Namespace,
    attrs: Omit<ProjectAttributes, 'defaultBranch'> & { forkedFromProjectId?: number; defaultBranch?: string | null },
    onCreated: (tx: Tx, p: Project) => Promise<void>,
  ): Promise<Project> {
    const runnersToken = this.secrets.generateToken(20);
    let createdId: number | undefined;
    try {
      return await this.tx.run(async (tx) => {
        if (namespace.kind === 'user' && namespace.ownerId !== null) {
          const limit = await this.projects.lockOwnerLimit(tx, namespace.ownerId);
          if (limit === null) throw new NotFound('Namespace');
          if ((await this.projects.countInNamespace(tx, namespace.id)) >= limit) {
            throw new Forbidden(undefined, `403 Your project limit is ${limit} projects! Please contact your administrator to increase it`);
          }
        }
        if (!(await this.projects.holdNamespace(tx, namespace.id))) throw new ValidationFailed({ namespace: ['is not valid'] });
        await this.assertFree(tx, namespace.id, attrs.name ?? null, attrs.path ?? null);
        const project = await this.projects.insert(tx, {
          name: attrs.name,
          path: attrs.path,
          description: attrs.description ?? null,
          namespaceId: namespace.id,
          creatorId: creator.id,
          visibilityLevel: attrs.visibilityLevel,
          defaultBranch: attrs.defaultBranch ?? null,
          issuesEnabled: attrs.issuesEnabled ?? true,
          mergeRequestsEnabled: attrs.mergeRequestsEnabled ?? true,
          wikiEnabled: attrs.wikiEnabled ?? true,
          buildsEnabled: attrs.buildsEnabled ?? true,
          snippetsEnabled: attrs.snippetsEnabled ?? true,
          containerRegistryEnabled: attrs.containerRegistryEnabled ?? false,
          lfsEnabled: attrs.lfsEnabled ?? null,
          sharedRunnersEnabled: attrs.sharedRunnersEnabled ?? true,
          publicBuilds: attrs.publicBuilds ?? true,
          archived: false,
          starCount: 0,
          forkedFromProjectId: attrs.forkedFromProjectId ?? null,
          importUrl: attrs.importUrl ?? null,
          importStatus: attrs.importUrl ? 'scheduled' : 'none',
          importError: null,
          runnersTokenDigest: this.secrets.digest(runnersToken),
          runnersTokenEncrypted: this.secrets.encrypt(runnersToken),
          lastActivityAt: new Date(),
        });
        createdId = project.id;
        await onCreated(tx, project);
        return project;
      });
    } catch (e) {
      if (createdId !== undefined) {
        const id = createdId;
        await this.git
          .remove(id)
          .catch((err) => this.logger.warn('project create: repository of the rolled-back project not removed', { project_id: id, error: String(err) }));
      }
      rethrowTaken(e);
    }
  }

  /** 409 with the fields (name, path) another project of the namespace already has. */
  async assertFree(tx: Tx, namespaceId: number, name: string | null, path: string | null, exceptId = 0): Promise<void> {
    const clash = await this.projects.clash(tx, namespaceId, name, path, exceptId);
    const taken: Record<string, string[]> = {};
    if (clash.name) taken.name = ['has already been taken'];
    if (clash.path) taken.path = ['has already been taken'];
    if (Object.keys(taken).length) throw new Conflict(taken);
  }
}
