/**
 * Cross-references, GitLab 8.17's wording and reference syntax (pure: the service resolves what the
 * references name, and decides who may see them).
 *
 * When an issue, a merge request, a comment on one of them or a pushed commit mentions another issue
 * or merge request, the mentioned one gets the system note `mentioned in <source>`
 * (SystemNoteService.cross_reference), where `<source>` is the mentioner's `gfm_reference` as seen
 * from the mentioned one's project: `issue #2`, `merge request !3`, `commit <sha>`, and across
 * projects `issue other#2` (same namespace) or `issue group/project#2`.
 *
 * References are GitLab's (Issue/MergeRequest.reference_pattern): `#12` / `!12`, optionally prefixed
 * by `project` (the source's namespace) or `namespace/project`, and the issue and merge request URLs
 * under the server's external URL. As in a rendered GitLab text, references inside code (fenced
 * blocks, inline code spans) are not references.
 */

export type MentionKind = 'Issue' | 'MergeRequest';

/** A reference found in a text: `project` null means the text's own project; `namespace` null (with a project) its namespace. */
export interface Mention {
  kind: MentionKind;
  namespace: string | null;
  project: string | null;
  iid: number;
}

/** What mentions: an issue, a merge request (directly, or through a comment on it), or a commit. */
export type CrossReferenceSource =
  { kind: 'Issue' | 'MergeRequest'; projectId: number; id: number; iid: number } | { kind: 'Commit'; projectId: number; sha: string };

/** A project as references name it. */
export interface ProjectPath {
  id: number;
  namespace: string;
  path: string;
}

/** At most this many distinct references of one text are acted on (GitLab processes the last 100 commits of a push likewise). */
export const MAX_MENTIONS = 100;

// GitLab 8.17's Gitlab::Regex::NAMESPACE_REGEX_STR (a namespace or project path), anchored
const NAME = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])$/;
const PATH_CHARS = /[a-zA-Z0-9_.\-/]/;
const MAX_INT = 2147483647;
/** Longest `namespace/project` looked at before a `#` or `!` (GitLab's paths are at most 255 characters each). */
const MAX_PREFIX = 520;

function validName(s: string): boolean {
  return NAME.test(s) && !s.endsWith('.git') && !s.endsWith('.atom');
}

/**
 * The `namespace/project` (or `project`) written right before `text[end]`, as GitLab's
 * `(?:(?<namespace>NAME)/)?(?<project>NAME)` prefix would match it: read backwards over path
 * characters (bounded), so a long run of letters costs linear time (a backtracking regex would not).
 */
function prefixBefore(text: string, end: number): { namespace: string | null; project: string | null } {
  let start = end;
  while (start > 0 && end - start < MAX_PREFIX && PATH_CHARS.test(text[start - 1])) start--;
  const segments = text.slice(start, end).split('/');
  // a match starts at the first character a name may start with: a leading `-` is not part of it
  const last = segments[segments.length - 1];
  const project = last.replace(/^-+/, '');
  if (!validName(project)) return { namespace: null, project: null };
  // `namespace/-project` is no namespace reference: the match can only start after the `-`
  if (project !== last || segments.length < 2) return { namespace: null, project };
  const namespace = segments[segments.length - 2].replace(/^-+/, '');
  return { namespace: validName(namespace) ? namespace : null, project };
}

/** The text without code: fenced blocks (``` or ~~~) and inline code spans. */
export function withoutCode(text: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null) {
      if (m) fence = m[1];
      else out.push(line.replace(/`+[^`\n]*`+/g, ' '));
    } else if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) {
      fence = null;
    }
  }
  return out.join('\n');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The issues and merge requests `text` mentions, each once, in order of appearance (at most
 * MAX_MENTIONS). `externalUrl` is the server's URL: links to its issues and merge requests count too.
 */
export function extractMentions(text: string, externalUrl: string): Mention[] {
  const out: Mention[] = [];
  const seen = new Set<string>();
  const add = (m: Mention) => {
    const key = `${m.kind}:${m.namespace ?? ''}/${m.project ?? ''}:${m.iid}`;
    if (m.iid < 1 || m.iid > MAX_INT || seen.has(key) || out.length >= MAX_MENTIONS) return;
    seen.add(key);
    out.push(m);
  };
  const plain = withoutCode(text);
  const found: { at: number; m: Mention }[] = [];
  // links first: `<external URL>/namespace/project/issues/12` (their `/issues/` holds no `#` or `!`)
  const base = externalUrl.replace(/\/+$/, '');
  const link = new RegExp(`${escapeRegExp(base)}/([a-zA-Z0-9_.\\-]+)/([a-zA-Z0-9_.\\-]+)/(issues|merge_requests)/(\\d{1,10})(?![0-9])`, 'g');
  for (const m of plain.matchAll(link)) {
    if (!validName(m[1]) || !validName(m[2])) continue;
    found.push({ at: m.index, m: { kind: m[3] === 'issues' ? 'Issue' : 'MergeRequest', namespace: m[1], project: m[2], iid: Number(m[4]) } });
  }
  for (const m of plain.matchAll(/([#!])(\d{1,10})(?![0-9])/g)) {
    const { namespace, project } = prefixBefore(plain, m.index);
    found.push({ at: m.index, m: { kind: m[1] === '#' ? 'Issue' : 'MergeRequest', namespace, project, iid: Number(m[2]) } });
  }
  for (const f of found.sort((a, b) => a.at - b.at)) add(f.m);
  return out;
}

/** `namespace/project` of a mention written in `from`'s texts. */
export function mentionedProject(m: Pick<Mention, 'namespace' | 'project'>, from: ProjectPath): { namespace: string; path: string } {
  if (m.project === null) return { namespace: from.namespace, path: from.path };
  return { namespace: m.namespace ?? from.namespace, path: m.project };
}

/** GitLab's Project#to_reference(from): nothing in the same project, `path` in the same namespace, else `namespace/path`. */
export function projectReference(project: ProjectPath, from: ProjectPath): string {
  if (project.namespace.toLowerCase() !== from.namespace.toLowerCase()) return `${project.namespace}/${project.path}`;
  return project.id === from.id ? '' : project.path;
}

/** `mentioned in issue #2` (the note's body on something of project `on`). */
export function crossReferenceBody(source: CrossReferenceSource, sourceProject: ProjectPath, on: ProjectPath): string {
  const ref = projectReference(sourceProject, on);
  if (source.kind === 'Commit') return `mentioned in commit ${ref ? `${ref}@` : ''}${source.sha}`;
  return source.kind === 'Issue' ? `mentioned in issue ${ref}#${source.iid}` : `mentioned in merge request ${ref}!${source.iid}`;
}

/** GitLab's SystemNoteService.cross_reference?: a system note whose body starts with `mentioned in ` (any case). */
export function isCrossReference(note: { system: boolean; body: string }): boolean {
  return note.system && /^mentioned in /i.test(note.body);
}

/** What a cross-reference note names, read back from its body as written on something of project `on`. */
export type ParsedCrossReference =
  { kind: 'Issue' | 'MergeRequest'; namespace: string; path: string; iid: number } | { kind: 'Commit'; namespace: string; path: string; sha: string };

const PARSE = /^mentioned in (issue|merge request|commit) (?:(?:([^\s/#!@]+)\/)?([^\s/#!@]+)(?=[#!@]))?([#!@])([0-9a-f]{7,40}|\d{1,10})$/i;

/** The source a cross-reference body names, or undefined when it names none (GitLab then shows the note to nobody). */
export function parseCrossReference(body: string, on: ProjectPath): ParsedCrossReference | undefined {
  const commitOnly = /^mentioned in commit ([0-9a-f]{7,40})$/i.exec(body);
  if (commitOnly) return { kind: 'Commit', namespace: on.namespace, path: on.path, sha: commitOnly[1].toLowerCase() };
  const m = PARSE.exec(body);
  if (!m) return undefined;
  const [, word, namespace, project, sign, id] = m;
  const where = mentionedProject({ namespace: namespace ?? null, project: project ?? null }, on);
  const kind = word.toLowerCase();
  if (kind === 'commit') return sign === '@' && project ? { kind: 'Commit', ...where, sha: id.toLowerCase() } : undefined;
  if (!/^\d+$/.test(id) || Number(id) < 1 || Number(id) > MAX_INT) return undefined;
  if (kind === 'issue' && sign === '#') return { kind: 'Issue', ...where, iid: Number(id) };
  if (kind === 'merge request' && sign === '!') return { kind: 'MergeRequest', ...where, iid: Number(id) };
  return undefined;
}

/**
 * A cross-reference body written on something of project `from`, as it must read on a copy in
 * project `to` (an issue moved with its notes): the same source, named relative to `to` (GitLab's
 * ReferenceRewriter). A body that names nothing is kept.
 */
export function rebaseCrossReference(body: string, from: ProjectPath, to: ProjectPath): string {
  const r = parseCrossReference(body, from);
  if (!r) return body;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const ref = !same(r.namespace, to.namespace) ? `${r.namespace}/${r.path}` : same(r.path, to.path) ? '' : r.path;
  if (r.kind === 'Commit') return `mentioned in commit ${ref ? `${ref}@` : ''}${r.sha}`;
  return r.kind === 'Issue' ? `mentioned in issue ${ref}#${r.iid}` : `mentioned in merge request ${ref}!${r.iid}`;
}
