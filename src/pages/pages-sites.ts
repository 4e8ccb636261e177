import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/config';
import { PagesConfig } from '../config/pages-config';
import { ExtractedSite } from './site-archive';

/**
 * The published sites on disk: `<DATA_DIR>/pages/<project id>/public`. Keyed by the project's id (as
 * the repositories are), so a project renamed or moved to another namespace keeps its site with no
 * files moved — the effect of GitLab 8.17's `PagesTransfer` moves on rename and transfer — and a
 * half-moved site cannot exist. Backups take the folder with the rest of DATA_DIR.
 */
@Injectable()
export class PagesSites {
  readonly pages: PagesConfig;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.pages = config.pages;
  }

  /** The folder a project's site is served from (it may not exist). */
  siteDir(projectId: number): string {
    return join(this.pages.dir, String(projectId), 'public');
  }

  /**
   * Extracts the archive's `public/` (`extract` writes the new folder it is given) beside the sites, then puts it in place with two
   * renames (GitLab 8.17's `deploy_page!`): the site before it is replaced only when the whole
   * extraction succeeded, and `stillLatest` is asked again right before the switch.
   */
  async publish(projectId: number, extract: (dest: string) => Promise<ExtractedSite>, stillLatest: () => Promise<boolean>): Promise<ExtractedSite> {
    await mkdir(this.pages.tmpDir, { recursive: true, mode: 0o700 });
    const work = await mkdtemp(join(this.pages.tmpDir, `${projectId}-`));
    try {
      const staged = join(work, 'public');
      const extracted = await extract(staged);
      if (!(await stillLatest())) throw new OutdatedSite();
      const projectDir = join(this.pages.dir, String(projectId));
      await mkdir(projectDir, { recursive: true, mode: 0o755 });
      const live = join(projectDir, 'public');
      // two deploys of one project finishing together: the one whose switch meets the other's new
      // site moves that aside too and tries again (the last to switch wins, each switch whole)
      for (let attempt = 0; ; attempt++) {
        await rename(live, join(work, `previous-${attempt}`)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT') throw e;
        });
        try {
          await rename(staged, live);
          return extracted;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (attempt >= 5 || (code !== 'ENOTEMPTY' && code !== 'EEXIST')) throw e;
        }
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Removes a project's site (renamed aside first, so it stops being served at once). */
  async remove(projectId: number): Promise<void> {
    const projectDir = join(this.pages.dir, String(projectId));
    await mkdir(this.pages.tmpDir, { recursive: true, mode: 0o700 });
    const aside = join(this.pages.tmpDir, `${projectId}.${randomBytes(6).toString('hex')}.deleted`);
    try {
      await rename(projectDir, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    await rm(aside, { recursive: true, force: true });
  }
}

/** The ref moved on while the site was extracted (8.17's `pages are outdated`). */
export class OutdatedSite extends Error {
  constructor() {
    super('pages are outdated');
  }
}
