import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
}

/** How the receiver answers a path: status (or a list used in turn, the last one repeating), delay, headers. */
export interface Behaviour {
  statuses?: number[];
  delayMs?: number;
  headers?: Record<string, string>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request (webhook deliveries). */
export class HookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour & { calls: number }>();
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<HookReceiver> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // kept as text
        }
        const path = req.url ?? '/';
        self.received.push({ path, headers: req.headers, body, at: Date.now() });
        const b = self.behaviours.get(path.split('?')[0]);
        const calls = b ? b.calls++ : 0;
        const status = b?.statuses?.length ? b.statuses[Math.min(calls, b.statuses.length - 1)] : 200;
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(status, { 'Content-Type': 'text/plain', ...(b?.headers ?? {}) });
          res.end(`answer ${status}`);
        }, b?.delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const self = new HookReceiver(server, (server.address() as AddressInfo).port); // the handler above runs only after this
    return self;
  }

  url(path: string, auth?: string): string {
    return `http://${auth ? auth + '@' : ''}127.0.0.1:${this.port}${path}`;
  }

  on(path: string, b: Behaviour): void {
    this.behaviours.set(path, { ...b, calls: 0 });
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `count` requests reached `path`. */
  async waitFor(path: string, count = 1, ms = 20_000): Promise<Received[]> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const got = this.at(path);
      if (got.length >= count) return got;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`receiver: ${this.at(path).length} of ${count} requests on ${path} after ${ms} ms`);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
