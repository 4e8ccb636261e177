import { Inject, Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Issue } from '../issues/issue.entity';
import { IssuesService } from '../issues/issues.service';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { User } from '../users/user.entity';
import { closingReferences } from './closing-references';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestsService } from './merge-requests.service';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { MergeRequestsRepository } from './merge-requests.repository';

/**
 * Issues named by closing phrases (`Closes #1`, `fixes group/project#2`, full issue URLs) in texts
 * of a project: only the issues `user` may see. Closing goes through the issues area, so its rules,
 * system note ("Status changed to closed") and event apply.
 */
@Injectable()
export class ClosingIssues {
  private readonly externalUrl: string;

  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly projects: ProjectResolver,
    private readonly issues: IssuesService,
    private readonly requests: MergeRequestsService,
    private readonly mrGit: MergeRequestGit,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.externalUrl = config.externalUrl;
  }

  /**
   * `GET .../closes_issues`: the issues merging would close — named in the description or a commit
   * message, when the target is the project's default branch — that the caller can see. Paginated.
   */
  async ofMergeRequest(user: User, ref: string, rawId: string, dto: PaginationDto): Promise<Paginated<Issue>> {
    const { project, mr } = await this.requests.findReadable(user, ref, rawId);
    const page = pageRequest(dto);
    let issues: Issue[] = [];
    if (project.defaultBranch && mr.targetBranch === project.defaultBranch) {
      const commits = await this.mrGit.commits(mr);
      issues = await this.referenced(user, project, [mr.description, ...commits.map((c) => c.message)]);
    }
    return new Paginated(issues.slice(page.offset, page.offset + page.perPage), issues.length, page);
  }

  async referenced(user: User, project: Project, texts: (string | null)[]): Promise<Issue[]> {
    const refs = closingReferences(texts.filter((t): t is string => !!t).join('\n'), this.externalUrl);
    const byProject = new Map<string, number[]>();
    for (const r of refs) {
      const key = r.project ?? '';
      byProject.set(key, [...(byProject.get(key) ?? []), r.iid]);
    }
    const out: Issue[] = [];
    for (const [path, iids] of byProject) {
      let target: Project = project;
      if (path) {
        try {
          target = await this.projects.find(path);
        } catch (e) {
          if (e instanceof NotFound) continue;
          throw e;
        }
      }
      for (const id of await this.repo.issueIdsByIid(target.id, iids)) {
        try {
          out.push((await this.issues.findReadable(user, String(target.id), String(id))).issue);
        } catch (e) {
          if (!(e instanceof NotFound) && !(e instanceof Forbidden)) throw e;
        }
      }
    }
    return out;
  }

  /** Closes the open ones among `issues` as `user` (issues the user may not update stay open). */
  async close(user: User, issues: Issue[]): Promise<void> {
    for (const issue of issues) {
      if (issue.state === 'closed') continue;
      try {
        await this.issues.update(user, String(issue.projectId), String(issue.id), { state_event: 'close' });
      } catch (e) {
        if (!(e instanceof NotFound) && !(e instanceof Forbidden)) throw e;
      }
    }
  }
}
