import { Injectable } from '@nestjs/common';
import { OnDomainEvent } from '../domain-events/domain-events';
import { KeysService } from '../users/keys.service';

/**
 * A deploy key goes with the last project it is enabled on, as GitLab 8.17's orphaned private deploy
 * keys (`DeployKeysProject#destroy_orphaned_deploy_key`): disabling it through the API removes it in
 * the same transaction (DeployKeysService); a project deleted — by itself, with its owner or with its
 * group — takes its links with it (a cascade), and the keys left enabled nowhere are removed here, so
 * their fingerprints are free again.
 */
@Injectable()
export class DeployKeyOrphans {
  constructor(private readonly keys: KeysService) {}

  @OnDomainEvent('project.destroyed', { durable: true, queue: 'deploy-keys.orphans.project' })
  async afterProjectDestroyed(): Promise<void> {
    await this.keys.removeOrphanedDeployKeys();
  }

  @OnDomainEvent('user.destroyed', { durable: true, queue: 'deploy-keys.orphans.user' })
  async afterUserDestroyed(): Promise<void> {
    await this.keys.removeOrphanedDeployKeys();
  }

  @OnDomainEvent('group.destroyed', { durable: true, queue: 'deploy-keys.orphans.group' })
  async afterGroupDestroyed(): Promise<void> {
    await this.keys.removeOrphanedDeployKeys();
  }
}
