import { Injectable } from '@nestjs/common';
import { ErrorWithBody, RecordNotFound, ValidationFailed } from '../../common/errors/domain-errors';
import { PageParams, Paginated, pageRequest } from '../../common/pagination/pagination';
import { ProjectRef } from '../../common/params/refs';
import { Transactions, Tx } from '../../database/transactions';
import { ProjectResolver, ResolvedProject } from '../../projects/project-resolver.service';
import type { Caller } from '../../common/caller/caller';
import { CreateEnvironmentDto, UpdateEnvironmentDto } from './dto/environments.dto';
import { environmentErrors, environmentType, generateSlug, normalizeUrl } from './environment-rules';
import { EnvironmentRow, EnvironmentsRepository } from './environments.repository';

export type { EnvironmentRow } from './environments.repository';

/** What the environment routes answer: the environment(s) and the project they show. */
export interface EnvironmentsResult<T> {
  resolved: ResolvedProject;
  result: T;
}

/** 8.17's `absence: { message: … }` on `slug`: Grape's 400 `{"error": …}`, before the project is looked up. */
function refuseSlug(dto: { slug?: unknown }): void {
  if (dto.slug !== undefined) throw new ErrorWithBody(400, { error: 'slug is automatically generated and cannot be changed' });
}

/** Slug collisions (a random suffix met another's) are retried this many times. */
const SLUG_ATTEMPTS = 3;

/**
 * `/projects/:id/environments` (GitLab 8.17's lib/api/environments.rb): reporters read them,
 * developers create them, masters rename, re-point and delete them (app/policies/project_policy.rb).
 * Also the find-or-create of a build's environment (`Environment.find_or_create_by(name:)`).
 */
@Injectable()
export class EnvironmentsService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly repo: EnvironmentsRepository,
    private readonly tx: Transactions,
  ) {}

  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<EnvironmentsResult<Paginated<EnvironmentRow>>> {
    const resolved = await this.projects.resolve(user, ref, 'read_environment');
    const page = pageRequest(q);
    const [rows, total] = await this.repo.list(resolved.project.id, page);
    return { resolved, result: new Paginated(rows, total, page) };
  }

  async create(user: Caller, ref: ProjectRef, dto: CreateEnvironmentDto): Promise<EnvironmentsResult<EnvironmentRow>> {
    refuseSlug(dto);
    const resolved = await this.projects.resolve(user, ref, 'create_environment');
    const projectId = resolved.project.id;
    const name = dto.name;
    const externalUrl = normalizeUrl(dto.external_url);
    const created = await this.tx.run(async (m) => {
      const errors = environmentErrors({ name, externalUrl }, await this.repo.taken(projectId, null, name, externalUrl, m));
      if (Object.keys(errors).length) throw new ValidationFailed(errors);
      const row = await this.insert(m, projectId, name, externalUrl);
      if (row) return row;
      // lost a race with a create of the same name
      throw new ValidationFailed({ name: ['has already been taken'] });
    });
    return { resolved, result: created };
  }

  /** Only what is given changes (8.17: `declared_params(include_missing: false)`); the slug stays. */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateEnvironmentDto): Promise<EnvironmentsResult<EnvironmentRow>> {
    refuseSlug(dto);
    const resolved = await this.projects.resolve(user, ref, 'update_environment');
    const projectId = resolved.project.id;
    const updated = await this.tx.run(async (m) => {
      const env = await this.repo.find(projectId, id, m);
      if (!env) throw new RecordNotFound();
      const name = dto.name ?? env.name;
      const externalUrl = dto.external_url === undefined ? env.externalUrl : normalizeUrl(dto.external_url);
      const errors = environmentErrors({ name, externalUrl }, await this.repo.taken(projectId, env.id, name, externalUrl, m));
      if (Object.keys(errors).length) throw new ValidationFailed(errors);
      try {
        return await this.repo.update(m, env.id, { name, externalUrl, environmentType: environmentType(name) });
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw new ValidationFailed({ name: ['has already been taken'] });
        throw e;
      }
    });
    return { resolved, result: updated };
  }

  /** Deletes it with its deployments (8.17: `dependent: :destroy`); answers it as it was. */
  async remove(user: Caller, ref: ProjectRef, id: number): Promise<EnvironmentsResult<EnvironmentRow>> {
    const resolved = await this.projects.resolve(user, ref, 'update_environment');
    const env = await this.repo.find(resolved.project.id, id);
    if (!env) throw new RecordNotFound();
    await this.tx.run((m) => this.repo.remove(m, env.id));
    return { resolved, result: env };
  }

  /**
   * The project's environment named `name`, created when missing (8.17's `find_or_create_by(name:)`
   * for a build's expanded environment name): undefined when the name is not a valid one (8.17's
   * create fails its validation and nothing is made).
   */
  async ensure(m: Tx, projectId: number, name: string): Promise<EnvironmentRow | undefined> {
    const found = await this.repo.findByName(projectId, name, m);
    if (found) return found;
    if (Object.keys(environmentErrors({ name, externalUrl: null })).length) return undefined;
    return (await this.insert(m, projectId, name, null)) ?? (await this.repo.findByName(projectId, name, m));
  }

  /**
   * 8.17's `persisted_environment.predefined_variables` for a build's payload: CI_ENVIRONMENT_NAME and
   * CI_ENVIRONMENT_SLUG of the project's environment `name` (the build's expanded environment name),
   * created if it is not yet; none for a name that is no valid environment name.
   */
  async buildVariables(projectId: number, name: string): Promise<{ key: string; value: string; public: boolean }[]> {
    const env = (await this.repo.findByName(projectId, name)) ?? (await this.tx.run((m) => this.ensure(m, projectId, name)));
    if (!env) return [];
    return [
      { key: 'CI_ENVIRONMENT_NAME', value: env.name, public: true },
      { key: 'CI_ENVIRONMENT_SLUG', value: env.slug, public: true },
    ];
  }

  /** Inserts with a generated slug; undefined when the name was taken meanwhile. */
  private async insert(m: Tx, projectId: number, name: string, externalUrl: string | null): Promise<EnvironmentRow | undefined> {
    for (let i = 0; i < SLUG_ATTEMPTS; i++) {
      const row = await this.repo.insert(m, { projectId, name, slug: generateSlug(name), externalUrl, environmentType: environmentType(name) });
      if (row) return row;
      if ((await this.repo.taken(projectId, null, name, null, m)).name) return undefined;
    }
    throw new ValidationFailed({ slug: ['has already been taken'] });
  }
}
