import { Inject, Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Issue } from '../issues/issue.entity';
import { IssueReference, IssuesService, ReferencedIssue } from '../issues/issues.service';
import { Project } from '../projects/project.entity';
import { closingReferences } from './closing-references';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestsService } from './merge-requests.service';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { parseProjectRef, projectKey, ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

/**
 * Issues named by closing phrases (`Closes #1`, `fixes group/project#2`, full issue URLs) in texts
 * of a project: only the issues `user` may see. Closing goes through the issues area, so its rules,
 * system note ("Status changed to closed") and event apply.
 */
@Injectable()
export class ClosingIssues {
  private readonly externalUrl: string;

  constructor(
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
  async ofMergeRequest(user: Caller, ref: ProjectRef, id: number, dto: PaginationDto): Promise<Paginated<ReferencedIssue>> {
    const { project, mr } = await this.requests.findReadable(user, ref, id);
    const page = pageRequest(dto);
    let issues: ReferencedIssue[] = [];
    if (project.defaultBranch && mr.targetBranch === project.defaultBranch) {
      const commits = await this.mrGit.commits(mr);
      issues = await this.referencedDetailed(user, project, [mr.description, ...commits.map((c) => c.message)]);
    }
    return new Paginated(issues.slice(page.offset, page.offset + page.perPage), issues.length, page);
  }

  async referenced(user: Caller, project: Project, texts: (string | null)[]): Promise<Issue[]> {
    return (await this.referencedDetailed(user, project, texts)).map((r) => r.issue);
  }

  /**
   * The issues the closing phrases of `texts` name (`#1` in `project`, `group/project#2` elsewhere),
   * each once, in the order of their projects' first mention then by iid, with what their
   * presentation needs: those `user` may read, in one statement whatever their number.
   */
  private async referencedDetailed(user: Caller | undefined, project: Project, texts: (string | null)[]): Promise<ReferencedIssue[]> {
    const refs = closingReferences(texts.filter((t): t is string => !!t).join('\n'), this.externalUrl);
    const ranks = new Map<string, number>();
    const wanted: IssueReference[] = [];
    for (const r of refs) {
      const key = r.project ?? '';
      if (!ranks.has(key)) ranks.set(key, ranks.size);
      const rank = ranks.get(key)!;
      const where = r.project === null ? { id: project.id } : projectKey(parseProjectRef(r.project));
      if (!where) continue;
      wanted.push('id' in where ? { rank, iid: r.iid, projectId: where.id } : { rank, iid: r.iid, ...where });
    }
    return this.issues.readableReferenced(user, wanted);
  }

  /** Closes the open ones among `issues` as `user` (issues the user may not update stay open). */
  async close(user: Caller, issues: Issue[]): Promise<void> {
    for (const issue of issues) {
      if (issue.state === 'closed') continue;
      try {
        await this.issues.update(user, { id: issue.projectId }, issue.id, { state_event: 'close' });
      } catch (e) {
        if (!(e instanceof NotFound) && !(e instanceof Forbidden)) throw e;
      }
    }
  }
}
