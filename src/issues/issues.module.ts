import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Issue } from './issue.entity';
import { LabelsModule } from '../labels/labels.module';
import { MilestonesModule } from '../milestones/milestones.module';
import { ProjectsModule } from '../projects/projects.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { IssueViews } from './issue-views.service';
import { IssuesController } from './issues.controller';
import { IssuesService } from './issues.service';

@Module({
  imports: [TypeOrmModule.forFeature([Issue]), ProjectsModule, LabelsModule, MilestonesModule, SubscriptionsModule],
  controllers: [IssuesController],
  providers: [IssuesService, IssueViews],
  exports: [IssuesService, IssueViews],
})
export class IssuesModule {}
