import { SecretsService } from '../common/crypto/secrets.service';
import { OutboundAddressRefused, OutboundUrlRefused } from '../common/net/outbound-url';
import { HookOptionsDto } from './dto/hook.dto';
import { vetHookUrl } from './hook-url';
import { WebHook } from './web-hook.entity';

/** The URL columns for `raw` (vetted; userinfo split off and encrypted). Throws OutboundUrlRefused. */
export async function urlColumns(secrets: SecretsService, raw: string, allowLocal: boolean): Promise<Partial<WebHook>> {
  const v = await vetHookUrl(raw, allowLocal);
  return { url: v.url, urlUserinfoEncrypted: v.userinfo ? secrets.encrypt(v.userinfo) : null };
}

/**
 * `urlColumns` where a refused URL answers `refused(blocked)`: each API words it its own way (project
 * hooks 422 "Invalid url given", system hooks 8.17's 400 validation error). `blocked` is set when the
 * URL is well-formed but refused for where it leads (`is blocked: it resolves to a loopback address
 * ...`), so that the caller learns the reason and the setting that allows it.
 */
export async function urlColumnsOr(secrets: SecretsService, raw: string, allowLocal: boolean, refused: (blocked?: string) => Error): Promise<Partial<WebHook>> {
  try {
    return await urlColumns(secrets, raw, allowLocal);
  } catch (e) {
    if (e instanceof OutboundUrlRefused) throw refused(e instanceof OutboundAddressRefused ? e.message : undefined);
    throw e;
  }
}

/** A new hook's columns: GitLab's defaults (push events only, SSL verified, no token), the vetted URL, then what the DTO sets. */
export function newHookColumns(
  type: 'ProjectHook' | 'SystemHook',
  projectId: number | null,
  url: Partial<WebHook>,
  options: Partial<WebHook>,
): Partial<WebHook> {
  return {
    type,
    projectId,
    pushEvents: true,
    tagPushEvents: false,
    issuesEvents: false,
    mergeRequestsEvents: false,
    noteEvents: false,
    buildEvents: false,
    wikiPageEvents: false,
    enableSslVerification: true,
    tokenEncrypted: null,
    ...url,
    ...options,
  };
}

/** The switch and option columns a DTO sets (absent fields untouched). */
export function optionColumns(secrets: SecretsService, dto: HookOptionsDto): Partial<WebHook> {
  const out: Partial<WebHook> = {};
  if (dto.push_events !== undefined) out.pushEvents = dto.push_events;
  if (dto.tag_push_events !== undefined) out.tagPushEvents = dto.tag_push_events;
  if (dto.issues_events !== undefined) out.issuesEvents = dto.issues_events;
  if (dto.merge_requests_events !== undefined) out.mergeRequestsEvents = dto.merge_requests_events;
  if (dto.note_events !== undefined) out.noteEvents = dto.note_events;
  if (dto.build_events !== undefined) out.buildEvents = dto.build_events;
  if (dto.enable_ssl_verification !== undefined) out.enableSslVerification = dto.enable_ssl_verification;
  if (dto.token !== undefined) out.tokenEncrypted = dto.token ? secrets.encrypt(dto.token) : null;
  return out;
}

export { OutboundUrlRefused };
