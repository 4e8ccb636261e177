import { Injectable } from '@nestjs/common';
import { DomainEventCatalogue } from '../domain-events/domain-event-catalogue';
import { OnDomainEvent } from '../domain-events/domain-events';
import { PagesSites } from './pages-sites';

/**
 * A deleted project's site goes with it (GitLab 8.17's `after_destroy :remove_pages`), whether or not
 * Pages are on now. Renames and transfers need nothing: sites are kept by project id (pages-sites.ts).
 */
@Injectable()
export class PagesCleanup {
  constructor(private readonly sites: PagesSites) {}

  @OnDomainEvent('project.destroyed', { durable: true, queue: 'pages.remove' })
  async onProjectDestroyed(e: DomainEventCatalogue['project.destroyed']): Promise<void> {
    await this.sites.remove(e.project.id);
  }
}
