import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { checkTitle } from '../common/dto/titles';
import { Forbidden, MissingAttribute, NotFound } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { ProjectAbility, ProjectAccess } from '../common/policy/policy';
import { Transactions, Tx } from '../database/transactions';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { CreateSnippetDto, ListSnippetsDto, UpdateSnippetDto } from './dto/snippet.dto';
import { Snippet } from './snippet.entity';
import { canReadSnippet, canUpdateSnippet, seesAllSnippets, snippetVisibilityCondition } from './snippet-policy';
import { checkFileName, checkRestrictedVisibility, snippetVisibility } from './snippet-rules';
import { SnippetsRepository } from './snippets.repository';
import { SystemNotesService } from '../notes/system-notes.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface SnippetInProject {
  project: Project;
  access: ProjectAccess;
  abilities: Set<ProjectAbility>;
  snippet: Snippet;
}

/**
 * Project snippets. Readable as the project allows and the snippet's own visibility says (decided
 * from the access the project resolver returned); the instance's restricted visibility levels bind
 * everyone but administrators.
 */
@Injectable()
export class SnippetsService {
  constructor(
    private readonly snippets: SnippetsRepository,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly settings: ApplicationSettingsService,
    private readonly systemNotes: SystemNotesService,
  ) {}

  /** Newest first (created_at, then id), paginated; non-members see only what the visibility allows. */
  async list(user: Caller, ref: ProjectRef, q: ListSnippetsDto): Promise<Paginated<Snippet>> {
    const { project, access } = await this.projects.resolve(user, ref, 'read_project_snippet');
    const page = pageRequest(q);
    const visible = seesAllSnippets(user, access) ? undefined : snippetVisibilityCondition(user);
    const [items, total] = await this.snippets.list(project.id, visible, page);
    return new Paginated(items, total, page);
  }

  /** The snippet with global id `id` in the project if the caller may read it, else `404 Snippet Not Found`. */
  async findReadable(user: Caller, ref: ProjectRef, id: number): Promise<SnippetInProject> {
    const found = await this.find(user, ref, id);
    if (!found.snippet) throw new NotFound('Snippet');
    return found as SnippetInProject;
  }

  /** `title`, `file_name`, `code`, `visibility_level` (all required; an empty level takes the instance default). */
  async create(user: Caller, ref: ProjectRef, dto: CreateSnippetDto): Promise<Snippet> {
    const { project } = await this.projects.resolve(user, ref, 'create_project_snippet');
    const title = checkTitle(dto.title);
    if (dto.visibility_level === undefined) throw new MissingAttribute('visibility_level');
    checkFileName(dto.file_name);
    const settings = await this.settings.get();
    const level = dto.visibility_level === null ? settings.defaultSnippetVisibility : snippetVisibility(dto.visibility_level);
    checkRestrictedVisibility(user.admin, level, settings.restrictedVisibilityLevels);
    return this.snippets.insert({
      projectId: project.id,
      authorId: user.id,
      title,
      fileName: dto.file_name,
      content: dto.code,
      visibilityLevel: level,
      expiresAt: null,
    });
  }

  /** `title`, `file_name`, `code`, `visibility_level` (all optional; an empty level is ignored): master+ or the snippet's author. */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateSnippetDto): Promise<Snippet> {
    const { abilities, snippet } = await this.findReadable(user, ref, id);
    if (!canUpdateSnippet(user, abilities, snippet)) throw new Forbidden();
    const changes: Partial<Snippet> = {};
    const title = checkTitle(dto.title);
    if (title !== undefined) changes.title = title;
    checkFileName(dto.file_name);
    if (dto.file_name !== undefined) changes.fileName = dto.file_name;
    if (dto.code !== undefined) changes.content = dto.code;
    if (dto.visibility_level !== undefined && dto.visibility_level !== null) {
      const level = snippetVisibility(dto.visibility_level);
      checkRestrictedVisibility(user.admin, level, (await this.settings.get()).restrictedVisibilityLevels);
      changes.visibilityLevel = level;
    }
    if (Object.keys(changes).length) await this.snippets.update(snippet.id, changes);
    return this.snippets.byId(snippet.id);
  }

  /**
   * Deletes the snippet and its notes; 200 even when it does not exist (spec), so an absent or
   * unreadable snippet gives `undefined`. Present but not the caller's to delete: 403.
   */
  async remove(user: Caller, ref: ProjectRef, id: number): Promise<Snippet | undefined> {
    const { abilities, snippet } = await this.find(user, ref, id);
    if (!snippet) return undefined;
    if (!canUpdateSnippet(user, abilities, snippet)) throw new Forbidden();
    await this.tx.run(async (tx) => {
      await this.systemNotes.deleteSnippetNotes(tx, snippet.id);
      await this.snippets.delete(tx, snippet.id);
    });
    return snippet;
  }

  /** A note was added (NotesService): the snippet's `updated_at` is now, in the note's transaction. */
  touch(tx: Tx, id: number): Promise<void> {
    return this.snippets.touch(tx, id);
  }

  // ---------------------------------------------------------------- helpers

  private async find(user: Caller, ref: ProjectRef, id: number): Promise<Omit<SnippetInProject, 'snippet'> & { snippet: Snippet | null }> {
    const { project, access, abilities } = await this.projects.resolve(user, ref, 'read_project_snippet');
    const snippet = await this.snippets.findInProject(project.id, id);
    const readable = !!snippet && canReadSnippet(user, abilities, access, snippet);
    return { project, access, abilities, snippet: readable ? snippet : null };
  }
}
