import { DynamicModule, Module } from '@nestjs/common';
import { ApplicationSettingsModule } from '../application-settings/application-settings.module';
import { BuildsModule } from '../ci/builds/builds.module';
import type { AppConfig } from '../config/config';
import { GitModule } from '../git/git.module';
import { ProjectsModule } from '../projects/projects.module';
import { PagesCleanup } from './pages-cleanup';
import { PagesDeployer } from './pages-deploy.service';
import { PagesHost } from './pages-host';
import { PagesSites } from './pages-sites';

/**
 * GitLab Pages (CE 8.17): the `pages` build's `public/` published (PagesDeployer, only when
 * PAGES_DOMAIN is set: otherwise no deploy job is ever queued), served on `<namespace>.<PAGES_DOMAIN>`
 * (PagesHost, an express middleware installed by app.factory.ts before the API), removed with its
 * project (PagesCleanup).
 */
@Module({})
export class PagesModule {
  static forRoot(config: Pick<AppConfig, 'pages'>): DynamicModule {
    return {
      module: PagesModule,
      imports: [BuildsModule, ProjectsModule, ApplicationSettingsModule, GitModule],
      providers: [PagesSites, PagesHost, PagesCleanup, ...(config.pages.domain ? [PagesDeployer] : [])],
      exports: [PagesHost],
    };
  }
}
