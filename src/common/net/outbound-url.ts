import { lookup } from 'node:dns/promises';
import * as ipaddr from 'ipaddr.js';

/** The only ranges an outbound request (webhook, import) may reach unless the admin allows the local network. */
const PUBLIC_V4 = new Set(['unicast', 'as112', 'amt']);
const PUBLIC_V6 = new Set(['unicast', 'as112v6', 'amt']);

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach an IPv4 host:
 * IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated but still routed by some
 * stacks), IPv4-translated (`::ffff:0:a.b.c.d`) and 6to4 (`2002:AABB:CCDD::/48`).
 */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const low = (): ipaddr.IPv4 => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  const range = v6.range();
  if (range === 'ipv4Mapped') return v6.toIPv4Address();
  if (range === 'rfc6145') return low();
  if (range === '6to4') return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff]);
  // ::/96 other than :: and ::1 (unspecified and loopback keep their own ranges)
  if (range !== 'unspecified' && range !== 'loopback' && p.slice(0, 6).every((x) => x === 0)) return low();
  return undefined;
}

/**
 * Whether `address` must be refused for outbound requests: anything that is not a public unicast
 * address once IPv4 embedded in IPv6 is unwrapped (loopback, private, link-local, CGNAT, multicast,
 * reserved, unique-local, NAT64, ...). Anything unparseable counts as local.
 */
export function isLocalAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (ip.kind() === 'ipv6') {
    const v4 = embeddedIPv4(ip as ipaddr.IPv6);
    if (v4) ip = v4;
    else return !PUBLIC_V6.has(ip.range());
  }
  return !PUBLIC_V4.has(ip.range());
}

const KIND: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  unspecified: 'the unspecified address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

/**
 * What kind of local address `address` is, in words (`a loopback address`), for the message of a
 * refusal; IPv4 carried in IPv6 (including NAT64) is named by the IPv4 address it reaches.
 */
export function localAddressKind(address: string): string {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'not a valid address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const p = v6.parts;
    const v4 = v6.range() === 'rfc6052' ? new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]) : embeddedIPv4(v6);
    if (v4) ip = v4;
  }
  return KIND[ip.range()] ?? 'a reserved address';
}

export class OutboundUrlRefused extends Error {}

/** The host name did not resolve (now): refused where the address must be known, retried by hook deliveries. */
export class OutboundHostUnresolved extends OutboundUrlRefused {
  constructor() {
    super('host could not be resolved');
  }
}

/** A well-formed URL refused for where it leads (a local address while local requests are not allowed). */
export class OutboundAddressRefused extends OutboundUrlRefused {}

/** The refusal of a local address, saying why and what an administrator can do. */
function localRefusal(address: string, literal: boolean): OutboundAddressRefused {
  return new OutboundAddressRefused(
    `is blocked: it ${literal ? 'is' : 'resolves to'} ${localAddressKind(address)} (requests to the local network are not allowed); ` +
      'an administrator can allow local requests with the setting allow_local_requests_from_hooks_and_services',
  );
}

/** Every address a host name resolves to. */
export type HostLookup = (host: string) => Promise<string[]>;

const systemLookup: HostLookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The resolver the guard uses (the system's). Replaceable so that tests can simulate names that
 * resolve to loopback or change between two lookups (DNS rebinding); the connection always goes to
 * the address the guard vetted, never to a second resolution.
 */
export const outboundDns: { lookup: HostLookup } = { lookup: systemLookup };

/**
 * The authority as written (between `//` and the path): more than one `@` in it is ambiguous
 * (`http://a@127.0.0.1@example.com/`: parsers disagree on which host is meant), so it is refused.
 */
export function ambiguousAuthority(raw: string): boolean {
  const m = /^[a-z][a-z0-9+.-]*:[\\/]{2}([^/\\?#]*)/i.exec(raw.trim());
  return !!m && m[1].split('@').length > 2;
}

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
/**
 * A URL checked earlier (`checkOutboundUrl`) and its pinned address, checked again against the current
 * setting without resolving its name again: the address connected to is the one vetted, even when the
 * work runs later (a queued import).
 */
export function recheckPinned(raw: string, address: string, allowLocal: boolean): CheckedUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlRefused('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundUrlRefused('must use http or https');
  if (ambiguousAuthority(raw) || !ipaddr.isValid(address)) throw new OutboundUrlRefused('is not a valid URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowLocal && isLocalAddress(address)) throw localRefusal(address, ipaddr.isValid(host));
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { url, host, port, address };
}

export async function checkOutboundUrl(raw: string, allowLocal: boolean): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlRefused('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundUrlRefused('must use http or https');
  if (ambiguousAuthority(raw)) throw new OutboundUrlRefused('is not a valid URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new OutboundUrlRefused('has no host');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const literal = ipaddr.isValid(host);
  // `localhost` and its subdomains are loopback by definition (RFC 6761), whatever the resolver says now
  if (!allowLocal && /^(.+\.)?localhost\.*$/i.test(host)) throw localRefusal('127.0.0.1', false);
  let addresses: string[];
  try {
    addresses = literal ? [host] : await outboundDns.lookup(host);
  } catch {
    throw new OutboundHostUnresolved();
  }
  if (addresses.length === 0) throw new OutboundHostUnresolved();
  const local = allowLocal ? undefined : addresses.find(isLocalAddress);
  if (local !== undefined) throw localRefusal(local, literal);
  return { url, host, port, address: addresses[0] };
}
