import { join } from 'node:path';

/**
 * Git LFS (CE 8.17's `lfs` section of gitlab.yml): on unless LFS_ENABLED=false (8.17's `lfs.enabled`,
 * default true). Objects are kept content-addressed under `<DATA_DIR>/lfs-objects` (8.17's
 * `lfs.storage_path`, `shared/lfs-objects`), in backups with the rest of DATA_DIR.
 */
export interface LfsConfig {
  enabled: boolean;
  /** `<DATA_DIR>/lfs-objects`: objects at `<oid[0..2]>/<oid[2..4]>/<oid[4..]>`. */
  dir: string;
  /** Uploads are written here while hashed, then renamed into place (skipped by backups: it starts with a dot). */
  tmpDir: string;
  /** The largest object accepted (LFS_MAX_OBJECT_SIZE, bytes; 0: no limit). */
  maxObjectSize: number;
}

const DEFAULT_MAX = 10 * 1024 ** 3;

export function parseLfsConfig(env: NodeJS.ProcessEnv, dataDir: string, fail: (msg: string) => Error): LfsConfig {
  const raw = (env.LFS_ENABLED ?? '').trim().toLowerCase();
  if (raw && raw !== 'true' && raw !== 'false') throw fail(`LFS_ENABLED must be true or false, got "${env.LFS_ENABLED}"`);
  const max = env.LFS_MAX_OBJECT_SIZE ?? '';
  if (max && !/^\d{1,16}$/.test(max)) throw fail(`LFS_MAX_OBJECT_SIZE must be a number of bytes, got "${max}"`);
  const dir = join(dataDir, 'lfs-objects');
  return { enabled: raw !== 'false', dir, tmpDir: join(dataDir, '.lfs-tmp'), maxObjectSize: max ? Number(max) : DEFAULT_MAX };
}
