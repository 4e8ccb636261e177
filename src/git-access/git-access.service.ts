import { Injectable } from '@nestjs/common';
import { CiConfigPushCheck } from '../ci/pipelines/push-ci-check';
import { NotFound } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { deployKeyAbilities, ProjectAbility } from '../common/policy/policy';
import { DeployKeysService } from '../deploy-keys/deploy-keys.service';
import { RepositoryLocks } from '../database/repository-locks';
import { GitService, RepositoryKey } from '../git/git.service';
import { PushRules } from '../git/receive-hooks';
import { RefUpdate } from '../git/smart-http';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { ProjectRef } from '../common/params/refs';
import { PushService } from '../repo-api/push.service';
import { User } from '../users/user.entity';

/** A git service, whatever the transport (smart HTTP's two, plus SSH's `git-upload-archive`). */
export type GitServiceName = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

/** What a CI build token grants: read access to its own project's repository. */
export interface BuildTokenGrant {
  projectId: number;
  user?: User;
}

/** Who asks: a user, a CI build (HTTP only), a deploy key (SSH only), or nobody (anonymous, HTTP only). */
export interface GitCaller {
  user?: User;
  build?: BuildTokenGrant;
  /** A deploy key: the projects it is enabled on only, read-only unless `can_push`; no user. */
  deployKey?: { id: number };
}

/** The caller may see the project but not run this service on it; `message` is GitLab's wording. */
export class GitAccessDenied extends Error {}

export interface GitGrant {
  project: Project;
  /** The repository served: the project's, or its wiki's (`<project>.wiki.git`). */
  repository: RepositoryKey;
  /** Given for pushes: the rules the update hook enforces, ref by ref. */
  pushRules?: PushRules;
}

/**
 * The transport-independent half of git over HTTP and SSH, so that no rule is written twice: which
 * project a path names and what the caller may do with it (the one policy: visibility, membership,
 * archived projects), the push rules (protected branches, default-branch protection), the per-repository
 * write lock and the post-push reactions (events, pipelines, merge-request updates, hooks).
 */
@Injectable()
export class GitAccess {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly git: GitService,
    private readonly push: PushService,
    private readonly deployKeys: DeployKeysService,
    private readonly locks: RepositoryLocks,
    private readonly logger: Logger,
    private readonly ciConfigCheck: CiConfigPushCheck,
  ) {}

  /**
   * Authorises `service` on the repository `ref` names (the transport's `namespace/project` path,
   * parsed by `parseProjectRef` like an API `:id`). Throws
   * `NotFound('Project')` for what the caller may not see (or that does not exist: the same answer),
   * and `GitAccessDenied` for what it sees but may not do.
   */
  async authorize(caller: GitCaller, ref: ProjectRef, service: GitServiceName): Promise<GitGrant> {
    const wikiOf = wikiProjectRef(ref);
    const { project, abilities } = await this.resolve(caller, wikiOf ?? ref);
    if (!abilities.has('read_project')) throw new NotFound('Project');
    if (wikiOf) return this.authorizeWiki(caller, project, abilities, service);
    const needed: ProjectAbility = service === 'git-receive-pack' ? 'push_code' : 'download_code';
    if (!abilities.has(needed)) {
      throw new GitAccessDenied(
        service !== 'git-receive-pack'
          ? 'You are not allowed to download code from this project.'
          : caller.deployKey
            ? 'This deploy key does not have write access to this project.' // GitLab 8.17's git_access text
            : 'You are not allowed to push code to this project.',
      );
    }
    if (!this.git.exists(project.id)) await this.git.create(project.id);
    const pushRules = service === 'git-receive-pack' ? await this.push.rulesFor(project, abilities) : undefined;
    return { project, repository: project.id, pushRules };
  }

  /**
   * A project's wiki over git, as GitLab 8.17's GitAccessWiki: read by whoever may download the project's
   * code when the wiki is enabled (`download_wiki_code`: reporters and above, anyone on a public
   * project, builds and deploy keys of the project); written by developers and above (`create_wiki`),
   * never by a deploy key nor a build. No protected branches nor tag rules apply (8.17's wiki access
   * checks only `create_wiki`); the update hook still refuses refs outside refs/heads and refs/tags.
   * The repository is created empty on its first use.
   */
  private async authorizeWiki(caller: GitCaller, project: Project, abilities: Set<ProjectAbility>, service: GitServiceName): Promise<GitGrant> {
    if (service !== 'git-receive-pack') {
      if (!project.wikiEnabled || !abilities.has('download_code')) throw new GitAccessDenied('You are not allowed to download code from this project.');
    } else if (caller.deployKey && !abilities.has('push_code')) {
      throw new GitAccessDenied('This deploy key does not have write access to this project.');
    } else if (!project.wikiEnabled || caller.deployKey || caller.build || !caller.user || !abilities.has('push_code')) {
      throw new GitAccessDenied("You are not allowed to write to this project's wiki.");
    }
    await this.git.ensureWiki(project.id);
    const pushRules: PushRules | undefined =
      service === 'git-receive-pack' ? { canPush: true, canPushProtected: true, canChangeTags: true, protected: [] } : undefined;
    return { project, repository: { projectId: project.id, wiki: true }, pushRules };
  }

  /**
   * Runs an authorised transfer. A push's git run holds the repository's write lock (serialised across
   * instances, as the API's writes); what only reads does not: fetches, and a push's ref advertisement
   * (`advertisement`: smart HTTP's `info/refs`, a request of its own). With `lockOnRequest` (SSH, where
   * the advertisement and the push are one git run) the lock is taken when `serve` calls `lock`, once the
   * client has sent its ref updates, so that a client that sends nothing holds no lock. `onUpdates` runs
   * the post-push reactions as the pusher once the refs moved: after the lock is given back (as the files
   * API's reactions run after its commit), before the transfer's answer ends; it answers what the pushed
   * `.gitlab-ci.yml` files have wrong, for the pusher's `remote:` lines (CiConfigPushCheck).
   */
  async run<T>(
    grant: GitGrant,
    caller: GitCaller,
    via: 'http' | 'ssh',
    serve: (onUpdates?: (u: RefUpdate[]) => Promise<string[] | void>, lock?: () => Promise<void>) => Promise<T>,
    o: { advertisement?: boolean; lockOnRequest?: boolean } = {},
  ): Promise<T> {
    const user = caller.user;
    const failed = (e: unknown) =>
      this.logger.error('post-push processing failed', { project_id: grant.project.id, via, error: e instanceof Error ? e.message : String(e) });
    // the refs moved whatever happens next: a failure after the push is logged, and the transfer still ends normally
    // a wiki push has no reactions (8.17's PostReceive: "Nothing defined here yet." — no event, no pipeline, no hook)
    const wiki = typeof grant.repository !== 'number';
    const react = wiki
      ? undefined
      : user
        ? (updates: RefUpdate[]) => this.push.afterPush(grant.project, user, updates, via).catch(failed)
        : caller.deployKey
          ? (updates: RefUpdate[]) => this.push.afterUserlessPush(grant.project, updates).catch(failed)
          : undefined;
    if (!grant.pushRules || o.advertisement) return serve(react);
    let held: Promise<() => Promise<void>> | undefined;
    const lock = async () => {
      await (held ??= this.locks.hold(grant.project.id));
    };
    const release = async () => {
      const r = await held?.catch(() => undefined); // a lock that could not be taken has nothing to give back
      await r?.();
    };
    if (!o.lockOnRequest) await lock();
    try {
      return await serve(
        react &&
          (async (updates) => {
            await release();
            const notices = this.ciConfigCheck.notices(grant.project, updates); // never fails, bounded in time
            await react(updates);
            return notices;
          }),
        lock,
      );
    } finally {
      await release();
    }
  }

  /**
   * The project and what the caller may do with it: a user's (or anonymous) abilities come with the
   * project from the one resolver (one SQL statement); a build token reads its own project only.
   */
  private async resolve(caller: GitCaller, ref: ProjectRef): Promise<{ project: Project; abilities: Set<ProjectAbility> }> {
    if (caller.deployKey) {
      // only the projects the key is enabled on exist for it (whatever their visibility)
      const project = await this.projects.find(ref);
      const access = await this.deployKeys.accessTo(caller.deployKey.id, project.id);
      return { project, abilities: access ? deployKeyAbilities(project, access.canPush) : new Set<ProjectAbility>() };
    }
    if (caller.build) {
      const project = await this.projects.find(ref);
      const own = caller.build.projectId === project.id;
      return { project, abilities: new Set<ProjectAbility>(own ? ['read_project', 'download_code'] : []) };
    }
    return this.projects.resolve(caller.user, ref, 'read_project');
  }
}

/** The project whose wiki `ref` names (`<namespace>/<project>.wiki`, the transports having cut `.git`), or undefined. */
function wikiProjectRef(ref: ProjectRef): ProjectRef | undefined {
  if (!('path' in ref) || !ref.path.endsWith('.wiki') || ref.path.length <= '.wiki'.length) return undefined;
  return { namespace: ref.namespace, path: ref.path.slice(0, -'.wiki'.length) };
}
