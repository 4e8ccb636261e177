import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { listenFailure, StartupError } from './common/errors/startup-error';
import { ConfigError, loadConfig } from './config/config';
import { DataFolderInUse } from './database/data-folder-lock';

async function main(): Promise<void> {
  const config = loadConfig();
  const embedded = !config.databaseUrl;
  // the young generation stays at its first size while the modules load (1 MB): else it grows to its
  // maximum there and stays, ~25 MB of an idle heap (see leanHeap, which puts V8's default back)
  if (embedded) setFlagsFromString('--semi-space-growth-factor=1');
  const { createApp } = await import('./app.factory');
  const { app, close } = await createApp(config);
  // on its server directly, not app.listen: that one also logs the error, a second line with colours
  const server = app.getHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((e: unknown) => {
    throw listenFailure(e, config.host, config.port); // e.g. port in use: one clear line
  });
  server.keepAliveTimeout = 65_000; // longer than typical reverse-proxy idle timeouts
  if (embedded) {
    leanHeap();
    // the data folder's lock now also tells where this server answers and which migrations it applied,
    // so that `cli check` beside it asks it instead of failing on the locked folder
    const [{ setLockDetails }, { MIGRATIONS }] = await Promise.all([import('./database/embedded-postgres'), import('./database/migrations')]);
    const address = server.address();
    const port = address && typeof address === 'object' ? address.port : config.port;
    setLockDetails({ listening: { host: config.host, port }, migration: MIGRATIONS[MIGRATIONS.length - 1]?.name });
  }
  process.stdout.write(
    JSON.stringify({
      time: new Date().toISOString(),
      level: 'info',
      msg: 'listening',
      address: `${config.host}:${config.port}`,
      external_url: config.externalUrl,
      database: config.databaseUrl ? 'postgresql' : `embedded (${config.embeddedDbDir})`,
    }) + '\n',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'shutting down', signal }) + '\n');
    // In-flight requests and git transfers get SHUTDOWN_TIMEOUT; then their connections are cut so
    // the queue and database still close cleanly; a stop that hangs even then is forced.
    const cut = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
    cut.unref();
    const force = setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 10_000);
    force.unref();
    try {
      await close(); // stops accepting connections, lets in-flight requests finish, closes the database
      process.exit(0);
    } catch {
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * The embedded default holds Postgres in this process too (aims: ≤ 250 MB idle, ≤ 350 MB under
 * load; measured in docs/performance-history.md, issue 27). Once started, the old generation may grow by
 * 20 % between full collections instead of V8's default factor (up to 4×): under load the heap
 * otherwise reached 150–250 MB, mostly garbage. Not before the start, where more collections while
 * the modules load would only slow it.
 */
function leanHeap(): void {
  setFlagsFromString('--heap-growing-percent=20');
  setFlagsFromString('--semi-space-growth-factor=2'); // V8's default again, for the load
}

main().catch((e) => {
  // an operator's mistake (folder in use, port taken, database unreachable), not a crash: one line, no stack
  if (e instanceof DataFolderInUse || e instanceof StartupError) process.stderr.write(`${e.message}\n`);
  else if (e instanceof ConfigError) process.stderr.write(`invalid configuration: ${e.message}\n`);
  else process.stderr.write(`failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
