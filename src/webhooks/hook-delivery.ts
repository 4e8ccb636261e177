import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, LookupFunction } from 'node:net';
import { CheckedUrl } from '../common/net/outbound-url';

export interface DeliveryRequest {
  target: CheckedUrl;
  headers: Record<string, string>;
  body: string;
  verifyTls: boolean;
  timeoutMs: number;
}

export interface DeliveryResult {
  status: number;
  /** The start of the response body (at most MAX_KEPT characters). */
  body: string;
  durationMs: number;
}

/** A delivery that got no HTTP answer (connection refused, reset, TLS, timeout). */
export class DeliveryNetworkError extends Error {
  constructor(
    message: string,
    readonly durationMs: number,
  ) {
    super(message);
  }
}

const MAX_READ = 64 * 1024;
export const MAX_KEPT = 2048;

/**
 * One POST of a hook payload. The connection goes to the address vetted just before (pinned, so DNS
 * cannot change it between the check and the use); the Host header and TLS name stay the URL's.
 * Redirects are not followed (a 3xx is an answer like any other). The timeout covers the whole request.
 */
export function deliver(req: DeliveryRequest): Promise<DeliveryResult> {
  const started = Date.now();
  const { url, address } = req.target;
  const family = isIP(address);
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const https = url.protocol === 'https:';
  const body = Buffer.from(req.body, 'utf8');
  return new Promise<DeliveryResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const options = {
      method: 'POST',
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: req.target.port,
      path: `${url.pathname}${url.search}`,
      headers: { ...req.headers, 'Content-Length': String(body.length) },
      lookup,
      agent: false as const,
      ...(https ? { rejectUnauthorized: req.verifyTls, servername: isIP(req.target.host) ? undefined : req.target.host } : {}),
    };
    const r = (https ? httpsRequest : httpRequest)(options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_READ) chunks.push(c);
        size += c.length;
        if (size >= MAX_READ) res.destroy();
      });
      const done = () =>
        finish(() =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_KEPT),
            durationMs: Date.now() - started,
          }),
        );
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    const timer = setTimeout(() => {
      r.destroy();
      finish(() => reject(new DeliveryNetworkError(`timed out after ${req.timeoutMs} ms`, Date.now() - started)));
    }, req.timeoutMs);
    r.on('error', (e: NodeJS.ErrnoException) =>
      finish(() => reject(new DeliveryNetworkError(e.code ? `${e.code}: ${e.message}` : e.message, Date.now() - started))),
    );
    r.end(body);
  });
}
