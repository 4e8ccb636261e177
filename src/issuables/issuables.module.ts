import { Module } from '@nestjs/common';
import { LabelsModule } from '../labels/labels.module';
import { MilestonesModule } from '../milestones/milestones.module';
import { UsersModule } from '../users/users.module';
import { IssuablesService } from './issuables.service';
import { SystemNotesModule } from '../notes/system-notes.module';

/** What issues and merge requests share: the issuable update, the assignee and milestone checks. */
@Module({
  imports: [LabelsModule, MilestonesModule, UsersModule, SystemNotesModule],
  providers: [IssuablesService],
  exports: [IssuablesService],
})
export class IssuablesModule {}
