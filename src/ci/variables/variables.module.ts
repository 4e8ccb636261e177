import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { Variable } from './variable.entities';
import { VariablesController } from './variables.controller';
import { VariablesRepository } from './variables.repository';
import { VariablesService } from './variables.service';

/** `/projects/:id/variables`: secret build variables (issue 13). Builds read them through BuildsRepository. */
@Module({
  imports: [TypeOrmModule.forFeature([Variable]), ProjectsModule],
  controllers: [VariablesController],
  providers: [VariablesRepository, VariablesService],
})
export class VariablesModule {}
