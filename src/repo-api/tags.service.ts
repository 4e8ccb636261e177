import { Injectable } from '@nestjs/common';
import { Conflict, Forbidden, isUniqueViolation, MethodNotAllowed, NotFound } from '../common/errors/domain-errors';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { parseNewRefName, parseRef, RefName, tagRef } from '../git/names';
import { Tag, ZERO_SHA } from '../git/objects';
import { RefUpdateRejected } from '../git/repository';
import { CreateTagDto, ReleaseDto } from './dto/tags.dto';
import { RepositoryLocks } from '../database/repository-locks';
import { PushService } from './push.service';
import { RepoContext, RepositoryAccess } from './repository-access.service';
import { Release } from './repo-api.entities';
import { RepositoryRecords } from './repo-api.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface TagView {
  tag: Tag;
  release?: Release;
}

const RELEASE_PATH = /^(.+)\/release$/;
/** GitLab 8's words for a tag moved or deleted below master (its pre-receive hook's; receive-hooks.ts says the same). */
const CHANGE_EXISTING_TAGS = 'You are not allowed to change existing tags on this project.';

@Injectable()
export class TagsService {
  constructor(
    private readonly records: RepositoryRecords,
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
    private readonly locks: RepositoryLocks,
  ) {}

  /** All tags, reverse-alphabetical, with their releases (one query). */
  /** Whole on the first page unless `per_page` says otherwise (clients search tags on their side). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<TagView>> {
    const ctx = await this.access.open(user, ref);
    // the refs are paged first and only the page's tags and commits read
    const [refs, releases] = await Promise.all([ctx.repo.tagRefs(), this.records.releases(ctx.project.id)]);
    const page = paginateAll(refs, q, { whole: true });
    const tags = await ctx.repo.describeTags(page.items);
    return new Paginated(tags, page.total, page.page).map((tag) => ({ tag, release: releases.get(tag.name) }));
  }

  async get(user: Caller, ref: ProjectRef, name: string): Promise<TagView> {
    return this.getIn(await this.access.open(user, ref), name);
  }

  private async getIn(ctx: RepoContext, name: string): Promise<TagView> {
    const ref = parseRef(name);
    const tag = ref === null ? null : await ctx.repo.tag(ref);
    if (!tag) throw new NotFound('Tag');
    const release = await this.records.release(ctx.project.id, tag.name);
    return { tag, release: release ?? undefined };
  }

  /**
   * `POST .../tags`: lightweight, or annotated with `message`; optional `release_description`.
   * Failures answer 405 with a message, as the spec says.
   */
  async create(user: Caller, ref: ProjectRef, dto: CreateTagDto): Promise<TagView> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name = parseNewRefName(dto.tag_name);
    if (name === null) throw new MethodNotAllowed('Tag name invalid');
    const commit = await this.locks.run(ctx.project.id, async () => {
      if (await ctx.repo.tag(name)) throw new MethodNotAllowed(`Tag ${name} already exists`);
      const target = parseRef(dto.ref);
      const commit = target === null ? null : await ctx.repo.commit(target);
      if (!commit) throw new MethodNotAllowed(`Target ${dto.ref} is invalid`);
      try {
        if (dto.message && dto.message.trim()) {
          await ctx.repo.createAnnotatedTag(name, commit.id, dto.message, { name: user.name, email: user.email });
        } else {
          await ctx.repo.updateRef(tagRef(name), commit.id, ZERO_SHA);
        }
      } catch (e) {
        if (e instanceof RefUpdateRejected) throw new MethodNotAllowed(`Tag ${name} already exists`);
        throw e;
      }
      return commit;
    });
    if (dto.release_description !== undefined && dto.release_description !== '') {
      await this.records.upsertRelease(ctx.project.id, name, dto.release_description);
    }
    await this.push.afterPush(ctx.project, user, [{ oldSha: ZERO_SHA, newSha: commit.id, ref: tagRef(name) }], 'api');
    return this.getIn(ctx, name);
  }

  /**
   * `DELETE .../tags/:tag`: 404 for a tag that does not exist; a developer may push tags but not remove one
   * (GitLab 8.17's deletion runs the pre-receive hook, whose `tag_checks` need master): `403 <the hook's words>` (decision 32).
   */
  async remove(user: Caller, ref: ProjectRef, raw: string): Promise<RefName> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name: RefName | null = parseNewRefName(raw);
    if (name === null) throw new NotFound('Tag');
    const commitSha = await this.locks.run(ctx.project.id, async () => {
      const tagSha = await ctx.repo.refSha(tagRef(name));
      if (!tagSha) throw new NotFound('Tag');
      if (!PushService.canChangeTags(ctx.abilities)) throw new Forbidden(undefined, `403 ${CHANGE_EXISTING_TAGS}`);
      const commitSha = (await ctx.repo.commit(tagRef(name)))?.id ?? tagSha;
      try {
        await ctx.repo.updateRef(tagRef(name), ZERO_SHA, tagSha);
      } catch (e) {
        if (e instanceof RefUpdateRejected) throw new NotFound('Tag');
        throw e;
      }
      return commitSha;
    });
    await this.records.deleteRelease(ctx.project.id, name);
    await this.push.afterPush(ctx.project, user, [{ oldSha: commitSha, newSha: ZERO_SHA, ref: tagRef(name) }], 'api');
    return name;
  }

  /** `POST .../tags/<tag>/release` (the route takes the rest of the path): 201; 404 `Tag does not exist`; 409 `Release already exists`. */
  async createRelease(user: Caller, ref: ProjectRef, path: string, dto: ReleaseDto): Promise<Release> {
    const name = releaseTag(path);
    const ctx = await this.access.open(user, ref, 'push_code');
    const tag = await this.tagOr404(ctx, name);
    try {
      return await this.records.insertRelease(ctx.project.id, tag.name, dto.description);
    } catch (e) {
      if (isUniqueViolation(e)) throw new Conflict('Release already exists');
      throw e;
    }
  }

  /** `PUT .../tags/<tag>/release`: 200; 404 when the tag or its release is missing. */
  async updateRelease(user: Caller, ref: ProjectRef, path: string, dto: ReleaseDto): Promise<Release> {
    const name = releaseTag(path);
    const ctx = await this.access.open(user, ref, 'push_code');
    const tag = await this.tagOr404(ctx, name);
    const release = await this.records.release(ctx.project.id, tag.name);
    if (!release) throw new NotFound('Release');
    return this.records.updateRelease(release, dto.description);
  }

  private async tagOr404(ctx: RepoContext, name: string): Promise<Tag> {
    const ref = parseRef(name);
    const tag = ref === null ? null : await ctx.repo.tag(ref);
    if (!tag) throw new NotFound('Tag');
    return tag;
  }
}

/** The tag of a `<tag>/release` route path; anything else is no route (404). */
function releaseTag(path: string): string {
  const m = RELEASE_PATH.exec(path);
  if (!m) throw new NotFound();
  return m[1];
}
