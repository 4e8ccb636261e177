import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, createApp } from '../../src/app.factory';
import { planning } from './planning';
import { startTestApp } from './test-app';

/**
 * The durable outbox across a restart. Instance A, on an embedded database in a temp folder (`dir`),
 * records changes and their jobs but runs no workers (QUEUE_WORKERS=false); local hook URLs are
 * allowed and a system hook is added (`systemHook`: its POST /hooks body). `restart()` stops A and
 * starts instance B on the same database, with workers; `close()` stops what runs and removes `dir`.
 */
export async function workerlessInstance(prefix: string, systemHook: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const a = await startTestApp({ QUEUE_WORKERS: 'false', QUEUE_POLL_SECONDS: '0.5', EMBEDDED_DB_DIR: join(dir, 'db'), LOG_LEVEL: 'error' });
  let b: App | undefined;
  let aOpen = true;
  const close = async () => {
    if (aOpen) await a.app.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const A = planning(a);
  try {
    await A.put(a.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: true }).expect(200);
    await A.post(a.root, '/hooks').send(systemHook).expect(201);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    dir,
    a,
    A,
    async restart(): Promise<App> {
      await a.app.close();
      aOpen = false;
      b = await createApp({ ...a.config, queue: { ...a.config.queue, workers: true } });
      return b;
    },
    close,
  };
}
