import { Injectable, OnModuleInit } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { ValidationFailed } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { checkOutboundUrl, CheckedUrl, OutboundUrlRefused, recheckPinned } from '../common/net/outbound-url';
import { Tx } from '../database/transactions';
import { GitService } from '../git/git.service';
import { QueueService } from '../queue/queue.service';
import { ProjectsRepository } from './projects.repository';

export const IMPORT_QUEUE = 'projects.import';
interface ImportJob {
  projectId: number;
  /** The vetted import URL, sealed with the secret key (it may carry credentials). */
  url: string;
  /** The address vetted when the project was created: the clone connects to it (no second resolution). */
  address?: string;
}

/** A vetted import URL: what is cloned, and what the project shows (no credentials). */
export type VettedImport = Awaited<ReturnType<ProjectImports['vet']>>;

/** Projects created from an `import_url`: the URL vetted at creation, the clone as a job on the durable queue. */
@Injectable()
export class ProjectImports implements OnModuleInit {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly git: GitService,
    private readonly queue: QueueService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.queue
      .register<ImportJob>(IMPORT_QUEUE, {
        handler: (job) => this.run(job.data),
        // clone failures end in `failed` (the owner imports again); a lost worker or database is retried
        retryLimit: 3,
        retryDelay: 30,
        expireInSeconds: 15 * 60,
      })
      .catch((e) => this.logger.error('project import: queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /** Checks an import URL (http(s), no local network unless allowed); the stored copy has no credentials. */
  async vet(raw: string, allowLocal: boolean) {
    try {
      const checked = await checkOutboundUrl(raw, allowLocal);
      const display = new URL(checked.url.toString());
      display.username = '';
      display.password = '';
      return { url: checked, display: display.toString() };
    } catch (e) {
      if (e instanceof OutboundUrlRefused) throw new ValidationFailed({ import_url: [e.message] });
      throw e;
    }
  }

  /** The clone as a job written by `tx` (the URL, which may hold credentials, sealed). */
  async enqueue(tx: Tx, projectId: number, vetted: VettedImport): Promise<void> {
    await this.queue.send<ImportJob>(IMPORT_QUEUE, { projectId, url: this.secrets.encrypt(vetted.url.url.toString()), address: vetted.url.address }, { tx });
  }

  /** Starts the queued clone without waiting for the next poll. */
  wake(): void {
    this.queue.wake(IMPORT_QUEUE);
  }

  /**
   * The import job: the URL is checked again (the address pinned now, the setting as it is now), then
   * cloned. A clone that fails marks the import `failed`; only errors of the database are retried.
   */
  private async run(job: ImportJob): Promise<void> {
    const projectId = job.projectId;
    const project = await this.projects.find({ id: projectId });
    if (!project || project.importStatus === 'finished' || project.importStatus === 'failed') return;
    try {
      await this.projects.update(projectId, { importStatus: 'started' });
      const allowLocal = (await this.settings.get()).allowLocalRequestsFromHooksAndServices;
      // the address vetted at creation, checked again against today's setting (never resolved again)
      const raw = this.secrets.decrypt(job.url);
      const checked: CheckedUrl = job.address ? recheckPinned(raw, job.address, allowLocal) : await checkOutboundUrl(raw, allowLocal);
      await this.git.importFrom(projectId, checked);
      const branch = await this.git.defaultBranch(projectId);
      await this.projects.update(projectId, { importStatus: 'finished', defaultBranch: branch, importError: null });
    } catch (e) {
      const message = e instanceof Error ? e.message.replace(/https?:\/\/[^\s@/]*@/g, 'https://[FILTERED]@') : 'import failed';
      this.logger.warn('project import failed', { project_id: projectId, error: message });
      const logged = (what: string) => (err: unknown) => this.logger.error(`project import: ${what}`, { project_id: projectId, error: String(err) });
      await this.projects.update(projectId, { importStatus: 'failed', importError: message.slice(0, 1000) }).catch(logged('failed state not recorded'));
      if (!this.git.exists(projectId)) await this.git.create(projectId).catch(logged('empty repository not created'));
    }
  }
}
