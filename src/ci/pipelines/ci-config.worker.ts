import { parentPort } from 'node:worker_threads';
import { processCiConfig } from './ci-config';

/**
 * The worker thread of `ci-config-workers.ts`: answers `{ id, request }` with `{ id, result }` (the
 * configuration processed: `processCiConfig`, the whole of `.gitlab-ci.yml` → plan), or with
 * `{ id, crash }` when processing threw something that is not a configuration error (a defect).
 * Says `{ ready: true }` once loaded, so that loading never counts against a request's time budget.
 */
const port = parentPort;
if (port) {
  port.on('message', (m: { id: number; request: Parameters<typeof processCiConfig>[0] }) => {
    try {
      port.postMessage({ id: m.id, result: processCiConfig(m.request) });
    } catch (e) {
      port.postMessage({ id: m.id, crash: e instanceof Error ? e.message : String(e) });
    }
  });
  port.postMessage({ ready: true });
}
