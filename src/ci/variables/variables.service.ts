import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../../common/pagination/pagination';
import { SecretsService } from '../../common/crypto/secrets.service';
import { isUniqueViolation, NotFound, ValidationFailed } from '../../common/errors/domain-errors';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { CreateVariableDto, UpdateVariableDto } from './dto/variables.dto';
import { VariablesRepository } from './variables.repository';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';

const KEY = /^[A-Za-z0-9_]+$/;
const taken = () => new ValidationFailed({ key: ['has already been taken'] });

export interface PlainVariable {
  key: string;
  value: string;
}

/** A project's secret build variables (`admin_build`: masters, owners, admins); values encrypted at rest. */
@Injectable()
export class VariablesService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly variables: VariablesRepository,
    private readonly secrets: SecretsService,
  ) {}

  /** Whole on the first page unless `per_page` says otherwise (as it was answered before it was paged). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<PlainVariable>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    return paginateAll(await this.variables.list(project.id), q, { whole: true }).map((v) => this.plain(v));
  }

  async get(user: Caller, ref: ProjectRef, key: string): Promise<PlainVariable> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    return this.plain(await this.find(project.id, key));
  }

  async create(user: Caller, ref: ProjectRef, dto: CreateVariableDto): Promise<PlainVariable> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    const errors: string[] = [];
    if (dto.key.length > 255) errors.push('is too long (maximum is 255 characters)');
    if (!KEY.test(dto.key)) errors.push("can contain only letters, digits and '_'.");
    if (errors.length) throw new ValidationFailed({ key: errors });
    if (await this.variables.find(project.id, dto.key)) throw taken();
    try {
      return this.plain(await this.variables.insert(project.id, dto.key, this.secrets.encrypt(dto.value)));
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
  }

  async update(user: Caller, ref: ProjectRef, key: string, dto: UpdateVariableDto): Promise<PlainVariable> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    const v = await this.find(project.id, key);
    return this.plain(await this.variables.update(v, this.secrets.encrypt(dto.value)));
  }

  async remove(user: Caller, ref: ProjectRef, key: string): Promise<PlainVariable> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    const v = await this.find(project.id, key);
    await this.variables.delete(v);
    return this.plain(v);
  }

  private async find(projectId: number, key: string) {
    const v = key.length <= 255 ? await this.variables.find(projectId, key) : null;
    if (!v) throw new NotFound('Variable');
    return v;
  }

  private plain(v: { key: string; valueEncrypted: string }): PlainVariable {
    return { key: v.key, value: this.secrets.decrypt(v.valueEncrypted) };
  }
}
