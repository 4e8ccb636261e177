import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { apiError, isUniqueViolation, NotFound } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { isValidBranchName } from '../git/git.service';
import { Tag, ZERO_SHA } from '../git/objects';
import { RefUpdateRejected } from '../git/repository';
import { User } from '../users/user.entity';
import { PushService } from './push.service';
import { RepositoryAccess } from './repository-access.service';
import { Release } from './repository.entities';

@Injectable()
export class TagsService {
  constructor(
    private readonly ds: DataSource,
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
  ) {}

  private async releases(projectId: number): Promise<Map<string, Release>> {
    const rows = await this.ds.getRepository(Release).find({ where: { projectId } });
    return new Map(rows.map((r) => [r.tag, r]));
  }

  /** All tags, reverse-alphabetical, with their releases (one query). */
  async list(user: User, ref: string): Promise<{ tag: Tag; release?: Release }[]> {
    const ctx = await this.access.open(user, ref);
    const [tags, releases] = await Promise.all([ctx.repo.tags(), this.releases(ctx.project.id)]);
    return tags.map((tag) => ({ tag, release: releases.get(tag.name) }));
  }

  async get(user: User, ref: string, name: string): Promise<{ tag: Tag; release?: Release }> {
    const ctx = await this.access.open(user, ref);
    const tag = await ctx.repo.tag(name);
    if (!tag) throw new NotFound('Tag');
    const release = await this.ds.getRepository(Release).findOne({ where: { projectId: ctx.project.id, tag: name } });
    return { tag, release: release ?? undefined };
  }

  /**
   * `POST .../tags`: lightweight, or annotated with `message`; optional `release_description`.
   * Failures answer 405 with a message, as the spec says.
   */
  async create(user: User, ref: string, p: Params): Promise<{ tag: Tag; release?: Release }> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const name = p.requireString('tag_name').trim();
    const target = p.requireString('ref').trim();
    const message = p.string('message');
    const releaseDescription = p.string('release_description');
    if (!isValidBranchName(name)) throw apiError(405, 'Tag name invalid');
    if (await ctx.repo.tag(name)) throw apiError(405, `Tag ${name} already exists`);
    const commit = await ctx.repo.commit(target);
    if (!commit) throw apiError(405, `Target ${target} is invalid`);
    try {
      if (message && message.trim()) {
        await ctx.repo.createAnnotatedTag(name, commit.id, message, { name: user.name, email: user.email });
      } else {
        await ctx.repo.updateRef(`refs/tags/${name}`, commit.id, ZERO_SHA);
      }
    } catch (e) {
      if (e instanceof RefUpdateRejected) throw apiError(405, `Tag ${name} already exists`);
      throw e;
    }
    if (releaseDescription !== undefined && releaseDescription !== '') {
      await this.ds
        .createQueryBuilder()
        .insert()
        .into(Release)
        .values({ projectId: ctx.project.id, tag: name, description: releaseDescription })
        .orUpdate(['description', 'updated_at'], ['project_id', 'tag'])
        .execute();
    }
    await this.push.afterPush(ctx.project, user, [{ oldSha: ZERO_SHA, newSha: commit.id, ref: `refs/tags/${name}` }], 'api');
    return this.get(user, String(ctx.project.id), name);
  }

  async remove(user: User, ref: string, name: string): Promise<{ tag_name: string }> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const raw = isValidBranchName(name) ? await ctx.repo.refSha(`refs/tags/${name}`) : null;
    if (!raw) throw apiError(404, 'No such tag');
    const commitSha = (await ctx.repo.commit(`refs/tags/${name}`))?.id ?? raw;
    try {
      await ctx.repo.updateRef(`refs/tags/${name}`, ZERO_SHA, raw);
    } catch (e) {
      if (e instanceof RefUpdateRejected) throw apiError(404, 'No such tag');
      throw e;
    }
    await this.ds.getRepository(Release).delete({ projectId: ctx.project.id, tag: name });
    await this.push.afterPush(ctx.project, user, [{ oldSha: commitSha, newSha: ZERO_SHA, ref: `refs/tags/${name}` }], 'api');
    return { tag_name: name };
  }

  /** `POST .../release`: 201; 404 `Tag does not exist`; 409 `Release already exists`. */
  async createRelease(user: User, ref: string, name: string, p: Params): Promise<Release> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const description = p.requireString('description');
    if (!(await ctx.repo.tag(name))) throw apiError(404, 'Tag does not exist');
    try {
      return await this.ds.getRepository(Release).save(
        this.ds.getRepository(Release).create({ projectId: ctx.project.id, tag: name, description }),
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw apiError(409, 'Release already exists');
      throw e;
    }
  }

  /** `PUT .../release`: 200; 404 when the tag or its release is missing. */
  async updateRelease(user: User, ref: string, name: string, p: Params): Promise<Release> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const description = p.requireString('description');
    if (!(await ctx.repo.tag(name))) throw apiError(404, 'Tag does not exist');
    const repo = this.ds.getRepository(Release);
    const release = await repo.findOne({ where: { projectId: ctx.project.id, tag: name } });
    if (!release) throw apiError(404, 'Release does not exist');
    release.description = description;
    return repo.save(release);
  }
}
