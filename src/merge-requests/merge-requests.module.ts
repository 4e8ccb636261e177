import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IssuablesModule } from '../issuables/issuables.module';
import { IssuesModule } from '../issues/issues.module';
import { LabelsModule } from '../labels/labels.module';
import { MilestonesModule } from '../milestones/milestones.module';
import { ProjectsModule } from '../projects/projects.module';
import { RepositoryModule } from '../repo-api/repo-api.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { UsersModule } from '../users/users.module';
import { ClosingIssues } from './closing-issues.service';
import { MergeRequest } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestViews } from './merge-request-views.service';
import { MergeRequestsController } from './merge-requests.controller';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';
import { AutomaticMergeSwitch } from './automatic-merge-switch.service';
import { MergeExecution } from './merge-execution.service';
import { MergeService } from './merge.service';
import { AutomaticMerges } from './automatic-merges.service';
import { MergeRequestPushReactions } from './merge-request-push-reactions.service';
import { MergeRequestUpdates } from './merge-request-updates.service';
import { SourceBranchRemoval } from './source-branch-removal.service';
import { SystemNotesModule } from '../notes/system-notes.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([MergeRequest]),
    ProjectsModule,
    RepositoryModule,
    IssuesModule,
    IssuablesModule,
    LabelsModule,
    MilestonesModule,
    SubscriptionsModule,
    UsersModule,
    SystemNotesModule,
  ],
  controllers: [MergeRequestsController],
  providers: [
    MergeRequestsRepository,
    MergeRequestsService,
    MergeRequestUpdates,
    MergeService,
    MergeExecution,
    AutomaticMergeSwitch,
    SourceBranchRemoval,
    AutomaticMerges,
    MergeRequestPushReactions,
    MergeRequestGit,
    MergeRequestViews,
    ClosingIssues,
  ],
  exports: [MergeRequestsService],
})
export class MergeRequestsModule {}
