import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IssuesModule } from '../issues/issues.module';
import { LabelsModule } from '../labels/labels.module';
import { MilestonesModule } from '../milestones/milestones.module';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repository/repository.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { UsersModule } from '../users/users.module';
import { ClosingIssues } from './closing-issues.service';
import { MergeRequest } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestViews } from './merge-request-views.service';
import { MergeRequestsController } from './merge-requests.controller';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';
import { MergeService } from './merge.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([MergeRequest]),
    ProjectsModule,
    RepositoryModule,
    IssuesModule,
    LabelsModule,
    MilestonesModule,
    SubscriptionsModule,
    UsersModule,
  ],
  controllers: [MergeRequestsController],
  providers: [MergeRequestsRepository, MergeRequestsService, MergeService, MergeRequestGit, MergeRequestViews, ClosingIssues],
  exports: [MergeRequestsService],
})
export class MergeRequestsModule {}
