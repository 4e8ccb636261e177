import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Variable } from './variable.entities';

/** Every query on `ci_variables`. */
@Injectable()
export class VariablesRepository {
  constructor(@InjectRepository(Variable) private readonly variables: Repository<Variable>) {}

  list(projectId: number): Promise<Variable[]> {
    return this.variables.find({ where: { projectId }, order: { id: 'ASC' } });
  }

  find(projectId: number, key: string): Promise<Variable | null> {
    return this.variables.findOne({ where: { projectId, key } });
  }

  insert(projectId: number, key: string, valueEncrypted: string): Promise<Variable> {
    return this.variables.save(this.variables.create({ projectId, key, valueEncrypted }));
  }

  async update(v: Variable, valueEncrypted: string): Promise<Variable> {
    await this.variables.update({ id: v.id }, { valueEncrypted });
    return this.variables.findOneByOrFail({ id: v.id });
  }

  async delete(v: Variable): Promise<void> {
    await this.variables.delete({ id: v.id });
  }
}
