import { Injectable } from '@nestjs/common';
import type { Caller } from '../../common/caller/caller';
import { NotFound } from '../../common/errors/domain-errors';
import { parseProjectRef } from '../../common/params/refs';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { BuildRefs } from '../builds/build-refs.service';
import { buildBadge, coverageBadge, renderBadge } from './badge-svg';

/** What a badge path names after `badges/`: the ref (which may hold `/`) and the badge. */
export function parseBadgePath(path: string): { ref: string; kind: 'build' | 'coverage' } | undefined {
  const m = /^(.+)\/(build|coverage)\.svg$/.exec(path);
  return m ? { ref: m[1], kind: m[2] as 'build' | 'coverage' } : undefined;
}

/**
 * The build status and coverage badges of a project's ref (GitLab 8.17's Projects::BadgesController):
 * anyone who can read the project sees them; anyone else, signed in or not, gets the project's 404.
 */
@Injectable()
export class BadgesService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly refs: BuildRefs,
  ) {}

  /** The SVG document of `/:namespace/:project/badges/<ref>/(build|coverage).svg`. */
  async badge(user: Caller | undefined, namespace: string, project: string, path: string, job: string | undefined): Promise<string> {
    const parsed = parseBadgePath(path);
    if (!parsed) throw new NotFound();
    const { project: p } = await this.projects.resolve(user, parseProjectRef(`${namespace}/${project}`), 'read_project');
    const subject = { projectId: p.id, ref: parsed.ref };
    if (parsed.kind === 'build') return renderBadge(buildBadge(await this.refs.badgeStatus(subject)));
    return renderBadge(coverageBadge(await this.refs.badgeCoverage(subject, job)));
  }
}
