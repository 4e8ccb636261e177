import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { ApplicationSettingsService, visibilityLevel } from '../application-settings/application-settings.service';
import { Forbidden, MissingAttribute, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params, parseId } from '../common/params/params';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { readTitle, rejectNul } from '../issues/inputs';
import { Project } from '../projects/project.entity';
import { ProjectsService } from '../projects/projects.service';
import { User } from '../users/user.entity';
import { Snippet } from './snippet.entity';
import { canReadSnippet, canUpdateSnippet, seesAllSnippets, snippetVisibilityCondition } from './snippet-policy';

const VISIBILITY_LABEL: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

export interface SnippetInProject {
  project: Project;
  abilities: Set<ProjectAbility>;
  snippet: Snippet;
}

/**
 * Project snippets. Readable as the project allows and the snippet's own visibility says; the
 * instance's restricted visibility levels bind everyone but administrators.
 */
@Injectable()
export class SnippetsService {
  constructor(
    private readonly ds: DataSource,
    private readonly projects: ProjectsService,
    private readonly policy: PolicyService,
    private readonly settings: ApplicationSettingsService,
  ) {}

  /** Newest first (created_at, then id), paginated; non-members see only what the visibility allows. */
  async list(user: User, ref: string, p: Params): Promise<Paginated<Snippet>> {
    const { project } = await this.projects.authorize(user, ref, 'read_project_snippet');
    const page = pageRequest(p);
    const qb = this.ds.getRepository(Snippet).createQueryBuilder('s').where('s.project_id = :projectId', { projectId: project.id });
    if (!(await this.seesAll(user, project))) {
      const c = snippetVisibilityCondition(user);
      qb.andWhere(c.sql, c.params);
    }
    qb.orderBy('s.created_at', 'DESC').addOrderBy('s.id', 'DESC').offset(page.offset).limit(page.perPage);
    const [items, total] = await qb.getManyAndCount();
    return new Paginated(items, total, page);
  }

  /** The snippet with global id `rawId` in the project if the caller may read it, else `404 Snippet Not Found`. */
  async findReadable(user: User, ref: string, rawId: string): Promise<SnippetInProject> {
    const found = await this.find(user, ref, rawId);
    if (!found.snippet) throw new NotFound('Snippet');
    return found as SnippetInProject;
  }

  async create(user: User, ref: string, p: Params): Promise<Snippet> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'create_project_snippet');
    const title = readTitle(p, { required: true }) as string;
    const fileName = p.requireString('file_name').trim();
    const content = p.requireString('code');
    const level = await this.readVisibility(user, p, true);
    this.assertFileName(fileName);
    const repo = this.ds.getRepository(Snippet);
    const snippet = await repo.save(
      repo.create({ projectId: project.id, authorId: user.id, title, fileName, content, visibilityLevel: level, expiresAt: null }),
    );
    return snippet;
  }

  /** `title`, `file_name`, `code`, `visibility_level` (all optional): master+ or the snippet's author. */
  async update(user: User, ref: string, rawId: string, p: Params): Promise<Snippet> {
    rejectNul(p);
    const { abilities, snippet } = await this.findReadable(user, ref, rawId);
    if (!canUpdateSnippet(user, abilities, snippet)) throw new Forbidden();
    const changes: Partial<Snippet> = {};
    const title = readTitle(p, { required: false });
    if (title !== undefined) changes.title = title;
    const fileName = p.string('file_name')?.trim();
    if (fileName !== undefined) {
      this.assertFileName(fileName);
      changes.fileName = fileName;
    }
    const content = p.string('code');
    if (content !== undefined) changes.content = content;
    const level = await this.readVisibility(user, p, false);
    if (level !== undefined) changes.visibilityLevel = level;
    if (Object.keys(changes).length) await this.ds.getRepository(Snippet).update({ id: snippet.id }, changes);
    return this.ds.getRepository(Snippet).findOneByOrFail({ id: snippet.id });
  }

  /**
   * Deletes the snippet and its notes; 200 even when it does not exist (spec), so an absent or
   * unreadable snippet gives `undefined`. Present but not the caller's to delete: 403.
   */
  async remove(user: User, ref: string, rawId: string): Promise<Snippet | undefined> {
    const { abilities, snippet } = await this.find(user, ref, rawId);
    if (!snippet) return undefined;
    if (!canUpdateSnippet(user, abilities, snippet)) throw new Forbidden();
    await this.ds.transaction(async (m) => {
      await m.query(`DELETE FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = $1`, [snippet.id]);
      await m.getRepository(Snippet).delete({ id: snippet.id });
    });
    return snippet;
  }

  /** Authors by id: one query. */
  async authors(snippets: Snippet[]): Promise<Map<number, User>> {
    const ids = [...new Set(snippets.map((s) => s.authorId).filter((id): id is number => id !== null))];
    if (ids.length === 0) return new Map();
    const users = await this.ds.getRepository(User).findBy({ id: In(ids) });
    return new Map(users.map((u) => [u.id, u]));
  }

  // ---------------------------------------------------------------- helpers

  private async find(user: User, ref: string, rawId: string): Promise<Omit<SnippetInProject, 'snippet'> & { snippet: Snippet | null }> {
    const { project, abilities } = await this.projects.authorize(user, ref, 'read_project_snippet');
    const id = parseId(rawId);
    const snippet = id === undefined ? null : await this.ds.getRepository(Snippet).findOne({ where: { id, projectId: project.id } });
    if (!snippet) return { project, abilities, snippet: null };
    const access = user.admin ? undefined : (await this.policy.projectAccess(user, [project])).get(project.id);
    return { project, abilities, snippet: canReadSnippet(user, abilities, access, snippet) ? snippet : null };
  }

  private async seesAll(user: User, project: Project): Promise<boolean> {
    if (user.admin) return true;
    return seesAllSnippets(user, (await this.policy.projectAccess(user, [project])).get(project.id));
  }

  /**
   * `visibility_level`: 0, 10, 20 (1 and 2 read as 10 and 20). Required on create; a value sent
   * empty (or null) takes the instance's `default_snippet_visibility`. Levels the administrator
   * restricted are refused for everyone else.
   */
  private async readVisibility(user: User, p: Params, required: boolean): Promise<number | undefined> {
    const present = Object.prototype.hasOwnProperty.call(p.raw, 'visibility_level');
    if (!present) {
      if (required) throw new MissingAttribute('visibility_level');
      return undefined;
    }
    const settings = await this.settings.get();
    const raw = p.raw.visibility_level;
    let level: number | undefined;
    if (raw === null || (typeof raw === 'string' && raw.trim() === '')) {
      if (!required) return undefined;
      level = settings.defaultSnippetVisibility;
    } else {
      let n: number | undefined;
      try {
        n = p.int('visibility_level');
      } catch {
        n = undefined;
      }
      level = n === undefined ? undefined : visibilityLevel(n);
      if (level === undefined) throw new ValidationFailed({ visibility_level: ['is not included in the list'] });
    }
    if (!user.admin && settings.restrictedVisibilityLevels?.includes(level)) {
      throw new ValidationFailed({
        visibility_level: [`${VISIBILITY_LABEL[level]} visibility has been restricted by your GitLab administrator`],
      });
    }
    return level;
  }

  private assertFileName(fileName: string): void {
    if (fileName === '') throw new ValidationFailed({ file_name: ["can't be blank"] });
    if (fileName.length > 255) throw new ValidationFailed({ file_name: ['is too long (maximum is 255 characters)'] });
  }
}
