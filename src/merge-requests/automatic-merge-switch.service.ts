import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions';
import { SystemNotesService } from '../notes/system-notes.service';
import { MergeRequest } from './merge-request.entity';
import { AUTO_MERGE_OFF, CANCELED_AUTO_MERGE } from './merge-request-changes';
import { MergeRequestsRepository } from './merge-requests.repository';

/** Calls off a merge request's automatic merge (on request, on a push that moves the source, on a build of another head). */
@Injectable()
export class AutomaticMergeSwitch {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly systemNotes: SystemNotesService,
  ) {}

  /**
   * Clears the automatic merge of `id` when it is still set and `still(current)` holds, with GitLab's
   * note ("Canceled the automatic merge") by `userId` when there is one; false when there was none to clear.
   */
  off(id: number, userId: number | null, still: (current: MergeRequest) => boolean = () => true): Promise<boolean> {
    return this.tx.run(async (m) => {
      const current = await this.repo.lock(m, id);
      if (!current || !current.mergeWhenBuildSucceeds || !still(current)) return false;
      await this.repo.update(m, id, { ...AUTO_MERGE_OFF, updatedAt: new Date() });
      if (userId !== null) await this.systemNotes.addSystemNotes(m, { projectId: current.projectId, type: 'MergeRequest', id }, userId, [CANCELED_AUTO_MERGE]);
      return true;
    });
  }
}
