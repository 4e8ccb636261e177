import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Addresses an outbound request (webhook, import) must not reach unless the admin allows the local network. */
const LOCAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as [string, number][]) {
  LOCAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  // ::/96 covers ::, ::1 and the IPv4-compatible forms (::127.0.0.1); ::ffff:0:0/96 the IPv4-mapped ones.
  ['::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['::ffff:0:0', 96], ['64:ff9b::', 96],
] as [string, number][]) {
  LOCAL.addSubnet(net, prefix, 'ipv6');
}

export function isLocalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return LOCAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class OutboundUrlRefused extends Error {}

export interface CheckedUrl {
  url: URL;
  host: string;
  port: number;
  /** The address the request must use (pinned, so that DNS cannot change between check and use). */
  address: string;
}

/**
 * Accepts only http(s) URLs whose every resolved address is public (or any address when
 * `allowLocal`). Returns the URL with the address to pin the connection to.
 */
export async function checkOutboundUrl(raw: string, allowLocal: boolean): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlRefused('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundUrlRefused('must use http or https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new OutboundUrlRefused('has no host');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new OutboundUrlRefused('host could not be resolved');
  }
  if (addresses.length === 0) throw new OutboundUrlRefused('host could not be resolved');
  if (!allowLocal && addresses.some(isLocalAddress)) {
    throw new OutboundUrlRefused('is blocked: requests to the local network are not allowed');
  }
  return { url, host, port, address: addresses[0] };
}
