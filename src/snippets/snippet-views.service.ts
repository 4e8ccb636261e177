import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { ProjectViews } from '../projects/project-views.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { Snippet } from './snippet.entity';
import { presentSnippet } from './snippets.presenter';

/** Presents snippets with their authors (one query for the whole page). */
@Injectable()
export class SnippetViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly users: UserDirectory,
  ) {}

  async many(viewer: User, snippets: Snippet[]) {
    const ctx = await this.views.context();
    const authors = await this.users.byIds(snippets.map((s) => s.authorId));
    return snippets.map((s) => presentSnippet(s, s.authorId !== null ? authors.get(s.authorId) : null, viewer, ctx));
  }

  async one(viewer: User, snippet: Snippet) {
    return (await this.many(viewer, [snippet]))[0];
  }

  async page(viewer: User, page: Paginated<Snippet>) {
    return new Paginated(await this.many(viewer, page.items), page.total, page.page);
  }
}
