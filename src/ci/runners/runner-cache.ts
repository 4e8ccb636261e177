import { Injectable, OnModuleInit } from '@nestjs/common';
import { NotifiedCache } from '../../database/notified-cache';
import { DbNotifications } from '../../database/notifications';

/**
 * Runner token → runner row, for the runners' poll (every runner, every few seconds): with it an
 * empty poll costs one statement, the claim. Every update or deletion of a runner row (pause, tags,
 * removal, contact time), through any instance or by hand, fires a trigger notifying
 * `runner_changed` with its id (migration RunnerChangedNotify), and every instance drops it; this
 * instance's own writes drop it at once as well (RunnersRepository).
 */
@Injectable()
export class RunnerCache extends NotifiedCache implements OnModuleInit {
  constructor(private readonly notifications: DbNotifications) {
    super({ channel: 'runner_changed', ttlMs: 30_000, max: 10_000, enabled: true });
  }

  onModuleInit(): Promise<void> {
    return this.listen(this.notifications);
  }
}
