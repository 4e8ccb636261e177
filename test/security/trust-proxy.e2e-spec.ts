import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, loadConfig, parseTrustProxy } from '../../src/config/config';
import { startTestApp, TestApp } from '../helpers/test-app';

const API = '/api/v3';
const ROOT_DIR = resolve(__dirname, '../..');

/** 15 wrong passwords for one login, each claiming another client IP in X-Forwarded-For: the statuses. */
async function guessWithRotatingForwardedFor(t: TestApp, login: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 15; i++) {
    const res = await t.http
      .post(`${API}/session`)
      .set('X-Forwarded-For', `203.0.113.${i + 1}`)
      .send({ login, password: `wrong-${i}` });
    statuses.push(res.status);
  }
  return statuses;
}

/**
 * TRUST_PROXY names the proxies whose X-Forwarded-For is believed. With the proxy's address there,
 * a client that reaches the app directly (here: from loopback, which is not the proxy) cannot choose
 * the IP the sign-in throttle counts, however it rotates X-Forwarded-For.
 */
describe('security: TRUST_PROXY trusts only the named proxy', () => {
  describe('the proxy is 10.9.8.7; the client (loopback) is not it', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ TRUST_PROXY: '10.9.8.7' });
      await t.createUser({ username: 'victim', password: 'victim-password' });
    });
    afterAll(() => t?.close());

    it('X-Forwarded-For from a direct client is ignored: 15 wrong passwords with rotating X-Forwarded-For end in 429', async () => {
      const statuses = await guessWithRotatingForwardedFor(t, 'victim');
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual(Array(5).fill(429));
      // and the right password stays locked out, whatever address the client claims
      await t.http.post(`${API}/session`).set('X-Forwarded-For', '198.51.100.7').send({ login: 'victim', password: 'victim-password' }).expect(429);
    });
  });

  describe('the proxy is loopback (the test client plays the proxy)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ TRUST_PROXY: '127.0.0.1, ::1, ::ffff:127.0.0.1' });
      await t.createUser({ username: 'victim', password: 'victim-password' });
    });
    afterAll(() => t?.close());

    it("the trusted proxy's X-Forwarded-For is the client IP: each claimed client has its own count", async () => {
      const statuses = await guessWithRotatingForwardedFor(t, 'victim');
      expect(statuses).toEqual(Array(15).fill(401));
      // one client that keeps failing is still locked
      for (let i = 0; i < 10; i++) {
        await t.http
          .post(`${API}/session`)
          .set('X-Forwarded-For', '198.51.100.9')
          .send({ login: 'victim', password: `again-${i}` })
          .expect(401);
      }
      await t.http.post(`${API}/session`).set('X-Forwarded-For', '198.51.100.9').send({ login: 'victim', password: 'victim-password' }).expect(429);
    });
  });

  describe('TRUST_PROXY is checked at boot', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'glv3-trust-proxy-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const load = (value: string) => loadConfig({ DATA_DIR: dir, SECRET_KEY: 'x'.repeat(32), TRUST_PROXY: value });

    it('accepts false, true, a hop count, and addresses / CIDR ranges / range names', () => {
      expect(load('').trustProxy).toBe(false);
      expect(load('false').trustProxy).toBe(false);
      expect(load('true').trustProxy).toBe(true);
      expect(load('2').trustProxy).toBe(2);
      expect(load('172.28.0.10').trustProxy).toEqual(['172.28.0.10']);
      expect(load(' 10.0.0.0/8, fd00::/8 ,::1 loopback').trustProxy).toEqual(['10.0.0.0/8', 'fd00::/8', '::1', 'loopback']);
    });

    it.each(['proxy', '10.0.0.0/33', '::1/129', '1.2.3', '10.0.0.1/8/1', '10.0.0.0/', '127.0.0.1, nginx', '0x7f.1'])(
      'refuses %p with a ConfigError',
      (value) => {
        expect(() => load(value)).toThrow(ConfigError);
        expect(() => load(value)).toThrow(/^TRUST_PROXY: ".+" is not an address or CIDR range/);
      },
    );
  });

  describe('docker-compose.yml: the proxy in front, only its port published', () => {
    type Service = {
      image?: string;
      build?: unknown;
      ports?: unknown[];
      expose?: unknown[];
      environment?: Record<string, string>;
      volumes?: string[];
      networks?: unknown;
    };
    let compose: { services: Record<string, Service>; networks?: Record<string, { ipam?: { config?: { subnet?: string }[] } }> };
    beforeAll(() => {
      compose = parse(readFileSync(join(ROOT_DIR, 'docker-compose.yml'), 'utf8'));
    });
    const proxyName = () => Object.keys(compose.services).find((n) => /^nginx(:|$)/.test(compose.services[n].image ?? '')) as string;

    it('parses, and has an nginx proxy, the app and PostgreSQL', () => {
      expect(Object.keys(compose.services).sort()).toEqual(['app', 'postgres', 'proxy']);
      expect(proxyName()).toBe('proxy');
    });

    it("publishes the proxy's HTTP port and, from the app, only SSH", () => {
      const published = Object.entries(compose.services).filter(([, s]) => (s.ports ?? []).length > 0);
      expect(published.map(([n]) => n).sort()).toEqual(['app', 'proxy']);
      expect(compose.services.proxy.ports).toEqual(['${HTTP_PORT:-8080}:80']);
      // the app publishes git over SSH only (SSH reads no forwarded-for header), never its HTTP port
      expect(compose.services.app.ports).toEqual(['${SSH_PORT:-2222}:2222']);
    });

    it("the app trusts X-Forwarded-For from the proxy's fixed address only", () => {
      const trust = compose.services.app.environment?.TRUST_PROXY as string;
      const networks = compose.services.proxy.networks as Record<string, { ipv4_address?: string }>;
      const [net, proxyNet] = Object.entries(networks)[0];
      expect(parseTrustProxy(trust)).toEqual([proxyNet.ipv4_address]);
      // a fixed address inside the network's own subnet
      expect(compose.networks?.[net]?.ipam?.config?.[0]?.subnet).toBe('172.28.0.0/24');
      expect(proxyNet.ipv4_address).toMatch(/^172\.28\.0\.\d+$/);
      expect(compose.services.app.networks).toEqual([net]);
    });

    it('the proxy runs the nginx config shipped in the repository, which overwrites X-Forwarded-For', () => {
      const mount = (compose.services.proxy.volumes ?? []).find((v) => v.endsWith(':/etc/nginx/conf.d/default.conf:ro')) as string;
      expect(mount).toBeDefined();
      const file = join(ROOT_DIR, mount.split(':')[0]);
      expect(existsSync(file)).toBe(true);
      const conf = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !l.trim().startsWith('#'))
        .join('\n');
      expect(conf).toMatch(/set \$app http:\/\/app:8080;/);
      expect(conf).toMatch(/proxy_pass \$app;/);
      expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$remote_addr;/);
      expect(conf).not.toMatch(/proxy_add_x_forwarded_for/);
    });
  });
});
