import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { ProjectViews } from '../projects/project-views.service';
import { UserDirectory } from '../users/user-directory.service';
import { Snippet } from './snippet.entity';
import { presentSnippet } from './snippets.presenter';
import type { Caller } from '../common/caller/caller';

/** Presents snippets with their authors (one query for the whole page). */
@Injectable()
export class SnippetViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly users: UserDirectory,
  ) {}

  async many(viewer: Caller, snippets: Snippet[]) {
    const ctx = await this.views.context();
    const authors = await this.users.byIds(snippets.map((s) => s.authorId));
    return snippets.map((s) => presentSnippet(s, s.authorId !== null ? authors.get(s.authorId) : null, viewer, ctx));
  }

  async one(viewer: Caller, snippet: Snippet) {
    return (await this.many(viewer, [snippet]))[0];
  }

  async page(viewer: Caller, page: Paginated<Snippet>) {
    return new Paginated(await this.many(viewer, page.items), page.total, page.page);
  }
}
