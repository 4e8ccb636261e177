import { Injectable } from '@nestjs/common';
import { Logger } from '../../common/logging/logger';
import { GitService } from '../../git/git.service';
import { parseSha, Sha, ZERO_SHA } from '../../git/names';
import type { RefUpdate } from '../../git/receive-hooks';
import { MAX_CONFIG_BYTES } from './ci-config';
import { CI_CONFIG_TIME_BUDGET_MS, CiConfigWorkers } from './ci-config-workers';
import { CI_CONFIG_FILE } from './pipelines.service';

/** The most distinct files a push's output lists (each lists at most MAX_LISTED_ERRORS errors). */
export const MAX_FILES = 10;

/**
 * What a push of an invalid `.gitlab-ci.yml` tells its pusher (issue 38, item 7), on `remote:` lines
 * of the push's own output: GitLab 8.17 said nothing there, and its pipeline's reason named one
 * error at a time. For each pushed branch or tag head that has a `.gitlab-ci.yml` (each distinct file
 * once), every error of the file (`CiConfig.allErrors`, in a worker thread). A valid file says
 * nothing; so does a check that fails or takes longer than `timeoutMs` (the pipeline, created
 * afterwards, carries its own reason): the push is never failed by it, nor delayed past that.
 */
@Injectable()
export class CiConfigPushCheck {
  /** The longest a push waits for its files' check; a test lowers it. */
  timeoutMs = CI_CONFIG_TIME_BUDGET_MS;

  constructor(
    private readonly git: GitService,
    private readonly workers: CiConfigWorkers,
    private readonly logger: Logger,
  ) {}

  /** The lines for the pusher (none when every pushed `.gitlab-ci.yml` is valid); never throws. */
  async notices(project: { id: number }, updates: RefUpdate[]): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), this.timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([this.check(project.id, updates), timeout]);
    } catch (e) {
      this.logger.warn('.gitlab-ci.yml check of a push failed', { project_id: project.id, error: e instanceof Error ? e.message : String(e) });
      return [];
    } finally {
      clearTimeout(timer);
    }
  }

  private async check(projectId: number, updates: RefUpdate[]): Promise<string[]> {
    if (!this.git.exists(projectId)) return [];
    const repo = this.git.repository(projectId);
    // each distinct file once, with the refs it is at
    const files = new Map<Sha, { size: number; refs: string[] }>();
    for (const u of updates) {
      const sha = parseSha(u.newSha);
      if (!sha || sha === ZERO_SHA) continue;
      const name = u.ref.startsWith('refs/heads/') ? `branch ${u.ref.slice(11)}` : u.ref.startsWith('refs/tags/') ? `tag ${u.ref.slice(10)}` : undefined;
      if (!name) continue;
      const blob = await repo.blobInfoAt(sha, CI_CONFIG_FILE);
      if (!blob) continue;
      const file = files.get(blob.sha) ?? { size: blob.size, refs: [] };
      file.refs.push(name);
      files.set(blob.sha, file);
    }
    const lines: string[] = [];
    let listed = 0;
    for (const [blob, file] of files) {
      if (listed === MAX_FILES) {
        lines.push('', `(${files.size - MAX_FILES} more distinct .gitlab-ci.yml files of this push are not checked here: their pipelines say)`);
        break;
      }
      listed++;
      const errors =
        file.size > MAX_CONFIG_BYTES
          ? [`The .gitlab-ci.yml is larger than ${MAX_CONFIG_BYTES / (1024 * 1024)} MB`]
          : await this.workers.allErrors(((await repo.blob(blob)) ?? Buffer.alloc(0)).toString('utf8'));
      if (!errors || errors.length === 0) continue;
      const refs = file.refs.length > 5 ? `${file.refs.slice(0, 5).join(', ')} and ${file.refs.length - 5} more` : file.refs.join(', ');
      lines.push('', `.gitlab-ci.yml (${refs}) is invalid:`, ...errors.map((e) => `  - ${e}`));
    }
    if (lines.length > 0) lines.push('');
    return lines;
  }
}
