import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { BuildsService } from '../ci/builds/builds.service';
import { CommitStatusesService } from '../ci/builds/commit-statuses.service';
import { Logger } from '../common/logging/logger';
import { pagesUrl } from '../config/pages-config';
import { Transactions } from '../database/transactions';
import { DomainEventCatalogue } from '../domain-events/domain-event-catalogue';
import { DomainEvents, OnDomainEvent } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { branchRef, parseRef, tagRef } from '../git/names';
import { ProjectResolver } from '../projects/project-resolver.service';
import { combinedStatus } from '../repo-api/commits.service';
import { OutdatedSite, PagesSites } from './pages-sites';
import { extractSite, extractTarSite, PAGES_ERRORS, SiteArchiveError } from './site-archive';

/** 8.17's texts for what is not the archive's fault. */
const MISSING = 'missing pages artifacts';
const OUTDATED = 'pages are outdated';
const STATUS_NAME = 'pages:deploy';

/**
 * GitLab 8.17's Pages deploy (`PagesService` → `PagesWorker` → `Projects::UpdatePagesService`): when
 * a build named `pages` succeeds and Pages are on, its artifacts' `public/` folder becomes the
 * project's site, and a `pages:deploy` commit status (stage `deploy`) on the build's commit says how it
 * went: `success`, or `failed` with 8.17's message as its description (allowed to fail when the ref has
 * moved on since, as 8.17's `allow_failure = !latest?`).
 *
 * A durable handler of `build.changed` (written by the transaction that ended the build; runs once,
 * on any instance); the extraction streams (site-archive.ts), so the event loop is never held.
 */
@Injectable()
export class PagesDeployer {
  constructor(
    private readonly sites: PagesSites,
    private readonly builds: BuildsService,
    private readonly statuses: CommitStatusesService,
    private readonly settings: ApplicationSettingsService,
    private readonly git: GitService,
    private readonly tx: Transactions,
    private readonly domainEvents: DomainEvents,
    private readonly logger: Logger,
    private readonly projects: ProjectResolver,
  ) {}

  @OnDomainEvent('build.changed', { durable: true, queue: 'pages.deploy', retryLimit: 2 })
  async onBuild(e: DomainEventCatalogue['build.changed']): Promise<void> {
    if (!this.sites.pages.domain) return; // 8.17: Settings.pages.enabled
    if (e.build.name !== 'pages' || e.build.status !== 'success') return;
    await this.deploy(e.build.id);
  }

  /** Publishes the `pages` build's site; the outcome is its `pages:deploy` status (never thrown). */
  async deploy(buildId: number): Promise<{ status: 'success' | 'failed'; description: string | null }> {
    const build = await this.builds.find(buildId);
    if (!build) return { status: 'failed', description: MISSING };
    const at = () => new Date();
    const base = { projectId: build.projectId, sha: build.sha, ref: build.ref, name: STATUS_NAME, authorId: build.userId, targetUrl: null, stage: 'deploy' };
    await this.tx.run((tx) => this.statuses.setExternal(tx, { ...base, state: 'running', description: null, at: at() }));
    const latest = async () => (await this.refSha(build.projectId, build.ref, build.tag)) === build.sha;
    let outcome: { status: 'success' | 'failed'; description: string | null };
    try {
      const expired = build.artifactsExpireAt !== null && build.artifactsExpireAt.getTime() <= Date.now();
      if (!build.artifactsFile || expired) throw new SiteArchiveError(MISSING);
      // 8.17 by the file name: .tar.gz / .tgz (tar) or .zip (what gitlab-ci-multi-runner uploads)
      const extract = /\.(tar\.gz|tgz)$/i.test(build.artifactsFile) ? extractTarSite : /\.zip$/i.test(build.artifactsFile) ? extractSite : null;
      if (!extract) throw new SiteArchiveError(PAGES_ERRORS.format);
      if (!(await latest())) throw new SiteArchiveError(OUTDATED);
      const maxBytes = (await this.settings.get()).maxPagesSize * 1024 * 1024;
      const archive = this.builds.files.artifactsPath(build.id);
      const site = await this.sites.publish(build.projectId, (dest) => extract(archive, dest, maxBytes), latest);
      const project = await this.projects.find({ id: build.projectId }).catch(() => null);
      this.logger.info('pages deployed', {
        project_id: build.projectId,
        build_id: build.id,
        url: project && pagesUrl(this.sites.pages, project.namespace.path, project.path),
        files: site.files,
        bytes: site.bytes,
        skipped_links: site.skippedLinks,
      });
      outcome = { status: 'success', description: null };
    } catch (err) {
      const known = err instanceof SiteArchiveError || err instanceof OutdatedSite;
      if (!known)
        this.logger.error('pages deploy failed', { project_id: build.projectId, build_id: build.id, error: err instanceof Error ? err.message : String(err) });
      outcome = { status: 'failed', description: known ? err.message : PAGES_ERRORS.extract };
    }
    const allowFailure = outcome.status === 'failed' ? !(await latest().catch(() => false)) : false;
    await this.tx.run((tx) => this.statuses.setExternal(tx, { ...base, state: outcome.status, description: outcome.description, allowFailure, at: at() }));
    await this.domainEvents.emitCommitted('commit_status.changed', {
      projectId: build.projectId,
      sha: build.sha,
      status: combinedStatus(await this.statuses.ofCommit(build.projectId, build.sha)),
    });
    return outcome;
  }

  /** The commit a branch (or tag) names now (8.17's `project.commit(build.ref).sha`). */
  private async refSha(projectId: number, ref: string, tag: boolean): Promise<string | null> {
    const name = parseRef(ref);
    if (name === null) return null;
    return this.git.repository(projectId).refSha(tag ? tagRef(name) : branchRef(name));
  }
}
