import { ambiguousAuthority, checkOutboundUrl, CheckedUrl, OutboundHostUnresolved, OutboundUrlRefused } from '../common/net/outbound-url';

export interface SplitUrl {
  /** The URL without userinfo (what is stored and shown). */
  url: string;
  /** `user:password` as written in the URL (percent-encoded), or null. */
  userinfo: string | null;
}

/**
 * Takes the userinfo out of a hook URL (it becomes Basic auth and is stored encrypted). The rest is
 * kept exactly as written (GitLab stores and shows the URL it was given: `http://example.com` stays
 * without the `/` that a serialised URL would add); whitespace, control characters and backslashes,
 * which a parser would silently fix up, make it invalid, as they did in GitLab's URI check, and so
 * does a URL not written `scheme://host...` (the userinfo could not be taken out of its text).
 */
export function splitUserinfo(raw: string): SplitUrl {
  const text = raw.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new OutboundUrlRefused('is not a valid URL');
  }
  // eslint-disable-next-line no-control-regex
  const written = /^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(text) && !/[\s\x00-\x1f\x7f\\]/.test(text);
  if (!written || ambiguousAuthority(text)) throw new OutboundUrlRefused('is not a valid URL');
  const userinfo = u.username || u.password ? `${u.username}:${u.password}` : null;
  // at most one `@` in the authority (ambiguousAuthority), so this removes exactly the userinfo
  const url = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1');
  return { url, userinfo };
}

/** `Authorization: Basic ...` for the userinfo of a hook URL. */
export function basicAuth(userinfo: string): string {
  const i = userinfo.indexOf(':');
  const user = decodeURIComponent(i < 0 ? userinfo : userinfo.slice(0, i));
  const pass = decodeURIComponent(i < 0 ? '' : userinfo.slice(i + 1));
  return 'Basic ' + Buffer.from(`${user}:${pass}`, 'utf8').toString('base64');
}

/**
 * A hook URL as it will be saved: http(s), no local address unless allowed, userinfo split off. A
 * host name that does not resolve now is accepted (decision 34, as GitLab 8 did): each delivery
 * resolves it again and checks every address, pinned, and one that does not resolve then fails
 * and is retried. `checked` is undefined for such a name.
 */
export async function vetHookUrl(raw: string, allowLocal: boolean): Promise<SplitUrl & { checked?: CheckedUrl }> {
  const split = splitUserinfo(raw);
  if (split.url.length > 2048) throw new OutboundUrlRefused('is too long');
  try {
    return { ...split, checked: await checkOutboundUrl(split.url, allowLocal) };
  } catch (e) {
    if (e instanceof OutboundHostUnresolved) return split;
    throw e;
  }
}
