/**
 * A start-up failure the operator can fix (the port is taken, the database cannot be reached): the
 * server prints its message, one line saying what failed and what to do, and exits non-zero, without
 * a stack trace. Anything else keeps its stack: it is a bug to report.
 */
export class StartupError extends Error {}

type SystemError = Error & { code?: string; address?: string; port?: number };

/** `app.listen` failed: port in use, not permitted, or an address this machine does not have. */
export function listenFailure(e: unknown, host: string, port: number): unknown {
  const code = (e as SystemError)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE')
    return new StartupError(`cannot listen on ${where}: the port is already in use; stop the other process or set PORT to a free port`);
  if (code === 'EACCES') return new StartupError(`cannot listen on ${where}: permission denied; use a port above 1023 or run with the right to bind it`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new StartupError(`cannot listen on ${where}: this machine has no such address; set HOST to one of its addresses (0.0.0.0 for all)`);
  return e;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** The PostgreSQL URL without its password, for messages. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

/** Opening the PostgreSQL database failed: unreachable, authentication refused, or no such database. */
export function databaseFailure(e: unknown, databaseUrl: string): unknown {
  const err = e as SystemError & { errors?: SystemError[] };
  // node reports a refused connection to a name with several addresses as an AggregateError
  const code = err?.code ?? err?.errors?.[0]?.code;
  const at = safeUrl(databaseUrl);
  const reason = err?.message || err?.errors?.[0]?.message || String(code);
  if (code && UNREACHABLE.has(code)) {
    return new StartupError(
      `cannot connect to the database at ${at} (${reason}); start PostgreSQL or correct DATABASE_URL (unset it to use the embedded database)`,
    );
  }
  if (code === '28P01' || code === '28000')
    return new StartupError(`the database at ${at} refused the credentials (${reason}); correct the user and password in DATABASE_URL`);
  if (code === '3D000') return new StartupError(`the database at ${at} does not exist (${reason}); create it (createdb) or correct DATABASE_URL`);
  return e;
}
