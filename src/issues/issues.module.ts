import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Issue } from './issue.entity';
import { IssuablesModule } from '../issuables/issuables.module';
import { LabelsModule } from '../labels/labels.module';
import { MilestonesModule } from '../milestones/milestones.module';
import { ProjectsModule } from '../projects/projects.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { UsersModule } from '../users/users.module';
import { IssueViews } from './issue-views.service';
import { IssuesController } from './issues.controller';
import { IssuesRepository } from './issues.repository';
import { IssuesService } from './issues.service';
import { SystemNotesModule } from '../notes/system-notes.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([Issue]),
    ProjectsModule,
    UsersModule,
    LabelsModule,
    MilestonesModule,
    SubscriptionsModule,
    IssuablesModule,
    SystemNotesModule,
  ],
  controllers: [IssuesController],
  providers: [IssuesService, IssuesRepository, IssueViews],
  exports: [IssuesService, IssueViews],
})
export class IssuesModule {}
