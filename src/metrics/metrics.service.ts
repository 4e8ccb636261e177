import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { NotFound } from '../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../config/config';
import { PoolStats } from '../database/pool-stats';
import { addGaugeSource, registry } from './registry';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseRange(entry: string): Range {
  if (entry.includes('/')) return ipaddr.parseCIDR(entry);
  const addr = ipaddr.parse(entry);
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** Normalises `::ffff:127.0.0.1` to IPv4 so one list serves both families. */
function normalise(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(ip)) return undefined;
  const addr = ipaddr.parse(ip);
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

@Injectable()
export class MetricsService implements OnModuleDestroy {
  private readonly allowed: Range[];
  private readonly removeSource: () => void;

  constructor(@Inject(APP_CONFIG) config: AppConfig, pool: PoolStats) {
    this.allowed = config.metricsAllowedIps.map(parseRange);
    this.removeSource = addGaugeSource('db_pool_connections', () => pool.snapshot());
  }

  onModuleDestroy(): void {
    this.removeSource();
  }

  /** Whether `ip` may scrape: loopback always, then the configured addresses and ranges. */
  allows(ip: string): boolean {
    const addr = normalise(ip);
    if (!addr) return false;
    if (addr.range() === 'loopback') return true;
    return this.allowed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  }

  async scrape(ip: string): Promise<string> {
    if (!this.allows(ip)) throw new NotFound();
    return registry.metrics();
  }
}
