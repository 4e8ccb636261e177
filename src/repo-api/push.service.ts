import { Inject, Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { Logger } from '../common/logging/logger';
import { PolicyProject, ProjectAbility } from '../common/policy/policy';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { GitService } from '../git/git.service';
import { BranchProtection, branchProtection, mayMergeIntoBranch, mayWriteBranch, protectedBranchMatches, PushRules } from '../git/receive-hooks';
import { parseRef, parseSha, Sha } from '../git/names';
import { Commit, ZERO_SHA } from '../git/objects';
import { RefUpdate } from '../git/smart-http';
import { Project } from '../projects/project.entity';
import { projectFullPath } from '../projects/projects.presenter';
import { ProjectsService } from '../projects/projects.service';
import { ProtectedBranch } from './repo-api.entities';
import { RepositoryJobs } from './repository-jobs.service';
import { RepositoryRecords } from './repo-api.repository';
import type { Caller } from '../common/caller/caller';

const MAX_PUSH_COMMITS = 20;

/** Branch protection and what happens around a push. */
@Injectable()
export class PushService {
  constructor(
    private readonly records: RepositoryRecords,
    private readonly git: GitService,
    private readonly domainEvents: DomainEvents,
    private readonly tx: Transactions,
    private readonly jobs: RepositoryJobs,
    private readonly settings: ApplicationSettingsService,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly projects: ProjectsService,
  ) {}

  protectedBranches(projectId: number): Promise<ProtectedBranch[]> {
    return this.records.protectedBranches(projectId);
  }

  /** The first protected branch whose name protects `branch` (exact name or a `*` pattern: protectedBranchMatches). */
  static matches(pb: ProtectedBranch[], branch: string): ProtectedBranch | undefined {
    return pb.find((p) => protectedBranchMatches(p.name, branch));
  }

  /** The rules the pre-receive hook applies for this caller. */
  async rulesFor(project: PolicyProject & { id: number }, abilities: Set<ProjectAbility>): Promise<PushRules> {
    const pb = await this.protectedBranches(project.id);
    return {
      canPush: abilities.has('push_code'),
      canPushProtected: abilities.has('push_code_to_protected_branches'),
      canChangeTags: PushService.canChangeTags(abilities),
      protected: pb.map((p) => ({ name: p.name, developersCanPush: p.developersCanPush, developersCanMerge: p.developersCanMerge })),
    };
  }

  /**
   * May `abilities` move or delete an existing tag? GitLab 8.17 refuses it below master, whatever the
   * transport (its pre-receive `tag_checks` ask for `admin_project`; the API's tag deletion runs the same hook).
   */
  static canChangeTags(abilities: Set<ProjectAbility>): boolean {
    return abilities.has('push_code') && abilities.has('admin_project');
  }

  /** How `branch` is protected (any matching rule: `branchProtection`, the hook's rule). */
  async protectionOf(projectId: number, branch: string): Promise<BranchProtection> {
    return branchProtection(await this.protectedBranches(projectId), branch);
  }

  /**
   * May `abilities` write to `branch` (files API, a new branch)? The pre-receive hook's rule
   * (`mayWriteBranch`): a protected branch needs master unless developers may push to it, or, for a
   * branch being created (`creating`), merge into it.
   */
  async canWriteBranch(projectId: number, branch: string, abilities: Set<ProjectAbility>, creating = false): Promise<boolean> {
    if (!abilities.has('push_code')) return false;
    return mayWriteBranch(await this.protectionOf(projectId, branch), PushService.pusher(abilities), creating);
  }

  /**
   * May `abilities` merge a merge request into `branch` (`PUT …/merge`, merge when build succeeds, its
   * cancellation)? GitLab 8.17's `can_be_merged_by?`: push access to the branch, or a developer when
   * developers may merge into it (`mayMergeIntoBranch`).
   */
  async canMergeIntoBranch(projectId: number, branch: string, abilities: Set<ProjectAbility>): Promise<boolean> {
    if (!abilities.has('push_code')) return false;
    return mayMergeIntoBranch(await this.protectionOf(projectId, branch), PushService.pusher(abilities));
  }

  private static pusher(abilities: Set<ProjectAbility>): { canPush: boolean; canPushProtected: boolean } {
    return { canPush: abilities.has('push_code'), canPushProtected: abilities.has('push_code_to_protected_branches') };
  }

  /**
   * After refs moved: the default branch on the first push (protected as the instance setting says),
   * push events with GitLab's push data and `last_activity_at` with the `push.received` domain event
   * (one transaction: its durable handlers are the webhooks, CI and merge requests).
   */
  async afterPush(project: Project, user: Caller, updates: RefUpdate[], via: 'http' | 'ssh' | 'api' = 'http'): Promise<void> {
    if (updates.length === 0) return;
    let data: Record<string, unknown>[] | undefined; // the push data, for the hooks
    let enqueued = false;
    try {
      await this.ensureDefaultBranch(project, updates);
      const events: (ActivityRecord & { data: Record<string, unknown> })[] = [];
      for (const u of updates) {
        events.push({
          projectId: project.id,
          authorId: user.id,
          action: 'pushed' as const,
          data: await this.pushData(project, user, u),
        });
      }
      const pushData = events.map((e) => e.data);
      // the push events and the jobs of the push's durable handlers (webhooks, CI, merge requests) commit
      // together: the hooks hear of recorded pushes only, and nothing is lost in between
      await this.tx.run(async (tx) => {
        await this.domainEvents.emit(tx, 'activity.recorded', { events: events });
        await this.domainEvents.emit(tx, 'push.received', { projectId: project.id, userId: user.id, updates, data: pushData });
      });
      enqueued = true;
      data = pushData;
    } catch (e) {
      this.logger.error('post-push processing failed', {
        project_id: project.id,
        via,
        error: e instanceof Error ? e.message : String(e),
      });
    }
    // when the transaction above failed, the push's handlers still hear of it (the refs did move)
    if (!enqueued) await this.domainEvents.emitCommitted('push.received', { projectId: project.id, userId: user.id, updates, data });
    await this.jobs
      .housekeepingAfterPush(project.id)
      .catch((e) => this.logger.error('housekeeping could not be scheduled', { project_id: project.id, error: e instanceof Error ? e.message : String(e) }));
  }

  /**
   * After a push no user made (a deploy key's): the default branch on the first push and the
   * housekeeping, and nothing else — GitLab 8.17's PostReceive found no user for a deploy key
   * (`key-N` of a DeployKey) and recorded no event, hook, pipeline or merge-request update for it.
   */
  async afterUserlessPush(project: Project, updates: RefUpdate[]): Promise<void> {
    if (updates.length === 0) return;
    await this.ensureDefaultBranch(project, updates).catch((e: unknown) =>
      this.logger.error('post-push processing failed', { project_id: project.id, via: 'ssh', error: e instanceof Error ? e.message : String(e) }),
    );
    await this.jobs
      .housekeepingAfterPush(project.id)
      .catch((e) => this.logger.error('housekeeping could not be scheduled', { project_id: project.id, error: e instanceof Error ? e.message : String(e) }));
  }

  private async ensureDefaultBranch(project: Project, updates: RefUpdate[]): Promise<void> {
    if (project.defaultBranch && (await this.git.branchExists(project.id, project.defaultBranch))) return;
    const repo = this.git.repository(project.id);
    const branches = await repo.branchNames();
    if (branches.length === 0) return;
    const pushed = updates.filter((u) => u.ref.startsWith('refs/heads/') && u.newSha !== ZERO_SHA).map((u) => u.ref.slice(11));
    const head = await repo.headBranch();
    const names = new Set<string>(branches);
    const choice = [head, 'master', ...pushed, ...branches].find((b) => b && names.has(b)) as string;
    await this.git.setDefaultBranch(project.id, choice);
    await this.projects.recordDefaultBranch(project.id, choice);
    project.defaultBranch = choice;
    const protection = (await this.settings.get()).defaultBranchProtection;
    // 8.17's GitPushService: 1 lets developers push, 3 lets them merge, 2 neither
    if (protection > 0) await this.records.protectIfAbsent(project.id, choice, { developersCanPush: protection === 1, developersCanMerge: protection === 3 });
  }

  /** GitLab's push payload (`data` of push events, and later of hooks). */
  async pushData(project: Project, user: Caller, u: RefUpdate): Promise<Record<string, unknown>> {
    const repo = this.git.repository(project.id);
    const isTag = u.ref.startsWith('refs/tags/');
    let commits: Commit[] = [];
    let total = 0;
    const newSha = parseSha(u.newSha);
    const oldSha = parseSha(u.oldSha);
    if (newSha !== null && newSha !== ZERO_SHA && oldSha !== null && !isTag) {
      const range = await repo.commitsBetween(oldSha === ZERO_SHA ? await this.baseFor(project, u) : oldSha, newSha);
      total = range.commits.length;
      commits = range.commits.slice(-MAX_PUSH_COMMITS).reverse();
    }
    const web = `${this.config.externalUrl}/${projectFullPath(project)}`;
    const files = await Promise.all(commits.map((c) => repo.commitDiff(c)));
    return {
      object_kind: isTag ? 'tag_push' : 'push',
      event_name: isTag ? 'tag_push' : 'push',
      before: u.oldSha,
      after: u.newSha,
      ref: u.ref,
      checkout_sha: u.newSha === ZERO_SHA ? null : u.newSha,
      message: null,
      user_id: user.id,
      user_name: user.name,
      user_email: user.email,
      user_avatar: null,
      project_id: project.id,
      project: {
        name: project.name,
        description: project.description,
        web_url: web,
        avatar_url: null,
        git_ssh_url: `${this.config.sshUrlPrefix}${projectFullPath(project)}.git`,
        git_http_url: `${web}.git`,
        namespace: project.namespace.name,
        visibility_level: project.visibilityLevel,
        path_with_namespace: projectFullPath(project),
        default_branch: project.defaultBranch,
        homepage: web,
        url: `${web}.git`,
        ssh_url: `${this.config.sshUrlPrefix}${projectFullPath(project)}.git`,
        http_url: `${web}.git`,
      },
      commits: commits.map((c, i) => ({
        id: c.id,
        message: c.message,
        timestamp: c.author.date,
        url: `${web}/commit/${c.id}`,
        author: { name: c.author.name, email: c.author.email },
        added: files[i].entries.filter((e) => e.newFile).map((e) => e.newPath),
        modified: files[i].entries.filter((e) => !e.newFile && !e.deletedFile).map((e) => e.newPath),
        removed: files[i].entries.filter((e) => e.deletedFile).map((e) => e.oldPath),
      })),
      total_commits_count: total,
      repository: {
        name: project.name,
        url: `${web}.git`,
        description: project.description,
        homepage: web,
        git_http_url: `${web}.git`,
        git_ssh_url: `${this.config.sshUrlPrefix}${projectFullPath(project)}.git`,
        visibility_level: project.visibilityLevel,
      },
    };
  }

  /** For a new branch: its commits are those not on the default branch (or all, when there is none). */
  private async baseFor(project: Project, u: RefUpdate): Promise<Sha> {
    const base = project.defaultBranch && `refs/heads/${project.defaultBranch}` !== u.ref ? parseRef(project.defaultBranch) : null;
    if (base) {
      const c = await this.git.repository(project.id).commit(base);
      if (c) return c.id;
    }
    return ZERO_SHA;
  }
}
