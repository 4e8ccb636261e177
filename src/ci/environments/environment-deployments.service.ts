import { Injectable, OnModuleInit } from '@nestjs/common';
import { Logger } from '../../common/logging/logger';
import { Transactions } from '../../database/transactions';
import { DomainEventCatalogue, DomainEventMeta, OnDomainEvent, PushReceived } from '../../domain-events/domain-events';
import { ZERO_SHA } from '../../git/objects';
import { QueueService } from '../../queue/queue.service';
import { BuildsService } from '../builds/builds.service';
import type { JobEnvironment } from '../pipelines/ci-config';
import { PipelinesService } from '../pipelines/pipelines.service';
import { DomainError } from '../../common/errors/domain-errors';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { UserDirectory } from '../../users/user-directory.service';
import { environmentErrors, expandVariables, normalizeUrl, Variable } from './environment-rules';
import { EnvironmentsRepository } from './environments.repository';
import { EnvironmentsService } from './environments.service';

/** The queue of "a build succeeded: record its deployment" (one job per successful build, written with its end). */
export const DEPLOY_QUEUE = 'ci.environments.deploy';
interface DeployJob {
  buildId: number;
}

/**
 * What a build's environment does (GitLab 8.17's BuildSuccessWorker + CreateDeploymentService, and
 * Ci::StopEnvironmentsService): a build with an `environment` that succeeds records a deployment
 * (action `start`) or stops the environment (action `stop`); a deleted branch stops the environments
 * last deployed from it, running their `on_stop` action.
 */
@Injectable()
export class EnvironmentDeployments implements OnModuleInit {
  constructor(
    private readonly environments: EnvironmentsService,
    private readonly repo: EnvironmentsRepository,
    private readonly builds: BuildsService,
    private readonly queue: QueueService,
    private readonly tx: Transactions,
    private readonly logger: Logger,
    private readonly pipelines: PipelinesService,
    private readonly projects: ProjectResolver,
    private readonly users: UserDirectory,
  ) {}

  onModuleInit(): void {
    // CI_ENVIRONMENT_NAME and CI_ENVIRONMENT_SLUG in the payload of a build with an environment (8.17's Ci::Build#variables)
    this.builds.addVariablesSource(async (b) =>
      b.environment ? this.environments.buildVariables(b.projectId, expandVariables(b.environment, await this.builds.variables(b))) : [],
    );
    this.queue
      .register<DeployJob>(DEPLOY_QUEUE, { handler: (job) => this.deploy(job.data.buildId), retryLimit: 5, retryDelay: 5, retryBackoff: true })
      .catch((e) => this.logger.error('deployments queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /**
   * A build ended (`build.changed`, in the transaction that moved its pipeline on): a successful one
   * gets a durable job, written with the change, so its deployment cannot be lost (a crash before the
   * job runs leaves the job). The job reads the build and does nothing for a build without environment.
   */
  @OnDomainEvent('build.changed', { inTransaction: true })
  async onBuildChanged(e: DomainEventCatalogue['build.changed'], meta: DomainEventMeta<'build.changed'>): Promise<void> {
    if (e.build.status !== 'success') return;
    await this.queue.send<DeployJob>(DEPLOY_QUEUE, { buildId: e.build.id }, { tx: meta.tx });
  }

  /**
   * A pipeline was created (8.17's CreatePipelineBuildsService): the environment of each of its builds
   * that names one is found or created with the build's expanded name, so its slug exists before the
   * build runs. After the pipeline commits, from a durable job; the deployment makes it too if this
   * did not.
   */
  @OnDomainEvent('pipeline.created', { durable: true, queue: 'ci.environments.pipeline', retryLimit: 2 })
  async onPipelineCreated(e: DomainEventCatalogue['pipeline.created']): Promise<void> {
    for (const id of await this.repo.buildsWithEnvironment(e.pipelineId)) {
      const build = await this.builds.find(id);
      if (!build?.environment) continue;
      const name = expandVariables(build.environment, await this.builds.variables(build));
      await this.tx.run((m) => this.environments.ensure(m, build.projectId, name));
    }
  }

  /**
   * CreateDeploymentService for a successful build with an environment: its name and URL expanded with
   * the build's variables, the environment found or created, its URL set, started (`start`) or stopped
   * (`stop`); a deployment recorded unless it ends stopped. Once per build (a second run finds it).
   */
  async deploy(buildId: number): Promise<void> {
    const build = await this.builds.find(buildId);
    const environment = build?.environment;
    if (!build || !environment || build.status !== 'success') return;
    if (await this.repo.deploymentOfBuild(build.id)) return;
    const options: Partial<JobEnvironment> = build.options?.environment ?? {};
    const variables: Variable[] = await this.builds.variables(build);
    const name = expandVariables(environment, variables);
    const url = options.url ? normalizeUrl(expandVariables(options.url, variables)) : null;
    const action = options.action ?? 'start';
    await this.tx.run(async (m) => {
      const found = await this.environments.ensure(m, build.projectId, name);
      const env = found && (await this.repo.lock(m, found.id));
      if (!env) {
        this.logger.warn('deployment not recorded: the environment name is not valid', { build_id: build.id, environment: name });
        return;
      }
      if (await this.repo.deploymentOfBuild(build.id, m)) return;
      if (url !== null && url !== env.externalUrl) {
        const errors = environmentErrors({ name: env.name, externalUrl: url }, await this.repo.taken(build.projectId, env.id, env.name, url, m));
        if (Object.keys(errors).length) {
          // 8.17: the environment does not save, and no deployment is recorded
          this.logger.warn('deployment not recorded: the environment URL is not valid', { build_id: build.id, environment: name, errors });
          return;
        }
        await this.repo.setExternalUrl(m, env.id, url);
      }
      const state = action === 'stop' ? 'stopped' : 'available';
      if (env.state !== state) await this.repo.setState(m, env.id, state);
      if (state === 'stopped') return;
      await this.repo.insertDeployment(m, {
        projectId: build.projectId,
        environmentId: env.id,
        ref: build.ref,
        tag: build.tag,
        sha: build.sha,
        userId: build.userId,
        buildId: build.id,
        onStop: options.on_stop ?? null,
      });
    });
  }

  /**
   * A push that deleted branches (git, or the branches API, which emits the same event): 8.17's
   * AfterBranchDeleteService stops the environments last deployed from each branch.
   */
  @OnDomainEvent('push.received', { durable: true, queue: 'push.environments', retryLimit: 2 })
  async onPush(e: PushReceived): Promise<void> {
    for (const u of e.updates) {
      if (u.newSha !== ZERO_SHA || !u.ref.startsWith('refs/heads/')) continue;
      await this.stopOnRef(e.projectId, e.userId, u.ref.slice('refs/heads/'.length));
    }
  }

  /**
   * Ci::StopEnvironmentsService: for a user who may deploy (`create_deployment`, developers and
   * above), each available environment whose last deployment was on `ref` is stopped and its
   * `on_stop` action played (`stop_with_action!`); without one it is only marked stopped.
   */
  async stopOnRef(projectId: number, userId: number, ref: string): Promise<void> {
    if (!ref) return;
    const envs = await this.repo.stoppableOnRef(projectId, ref);
    if (envs.length === 0) return;
    if (!(await this.mayDeploy(projectId, userId))) return;
    for (const e of envs) {
      const stopped = await this.tx.run(async (m) => {
        const env = await this.repo.lock(m, e.id);
        if (!env || env.state !== 'available') return false;
        await this.repo.setState(m, env.id, 'stopped');
        return true;
      });
      if (!stopped || !e.onStop || e.pipelineId === null) continue;
      const action = await this.repo.stopAction(e.pipelineId, e.onStop, e.deployableName);
      if (!action) continue;
      try {
        await this.pipelines.play(action.id, userId);
      } catch (err) {
        this.logger.warn('stop action not played', {
          project_id: projectId,
          environment_id: e.id,
          build_id: action.id,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  /** 8.17's `can?(current_user, :create_deployment, project)` for the user who deleted the branch. */
  private async mayDeploy(projectId: number, userId: number): Promise<boolean> {
    const user = await this.users.byId(userId);
    if (!user) return false;
    try {
      await this.projects.resolve(user, { id: projectId }, 'create_deployment');
      return true;
    } catch (e) {
      if (e instanceof DomainError) return false;
      throw e;
    }
  }
}
