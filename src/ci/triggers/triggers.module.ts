import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProjectsModule } from '../../projects/projects.module';
import { PipelinesModule } from '../pipelines/pipelines.module';
import { Trigger, TriggerRequest } from './trigger.entities';
import { TriggersController } from './triggers.controller';
import { TriggersRepository } from './triggers.repository';
import { TriggersService } from './triggers.service';

/** Build triggers (issue 13): CRUD for masters and `POST /projects/:id/trigger/builds` by token. */
@Module({
  imports: [TypeOrmModule.forFeature([Trigger, TriggerRequest]), ProjectsModule, PipelinesModule],
  controllers: [TriggersController],
  providers: [TriggersRepository, TriggersService],
})
export class TriggersModule {}
