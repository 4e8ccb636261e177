/** Our own value objects for what git returns; nothing outside src/git parses git output. */
import { RefName, Sha, ZERO_SHA } from './names';

export { ZERO_SHA };

export interface Signature {
  name: string;
  email: string;
  /** ISO 8601 with milliseconds, in the commit's own offset (e.g. 2014-02-27T10:14:56.000+02:00). */
  date: string;
  epoch: number;
}

export interface Commit {
  id: Sha;
  parentIds: Sha[];
  tree: Sha;
  author: Signature;
  committer: Signature;
  message: string;
}

export interface TreeEntry {
  id: Sha;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  mode: string;
}

export interface Branch {
  name: RefName;
  commit: Commit;
}

export interface Tag {
  name: RefName;
  /** The annotation, or null for a lightweight tag. */
  message: string | null;
  commit: Commit;
}

export interface DiffEntry {
  oldPath: string;
  newPath: string;
  aMode: string | null;
  bMode: string | null;
  diff: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  /** True when the entry's text was cut at the per-file limit. */
  tooLarge: boolean;
}

function isoWithOffset(epoch: number, tz: string): string {
  const m = /^([+-])(\d{2})(\d{2})$/.exec(tz) ?? ['', '+', '00', '00'];
  const sign = m[1] === '-' ? -1 : 1;
  const offsetMin = sign * (Number(m[2]) * 60 + Number(m[3]));
  const local = new Date((epoch + offsetMin * 60) * 1000).toISOString().replace('Z', '');
  return `${local}${m[1]}${m[2]}:${m[3]}`;
}

function parseSignature(raw: string): Signature {
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(raw);
  if (!m) return { name: raw, email: '', date: new Date(0).toISOString(), epoch: 0 };
  const epoch = Number(m[3]);
  return { name: m[1], email: m[2], date: isoWithOffset(epoch, m[4]), epoch };
}

/** Parses a raw commit object (as `git cat-file commit` prints it). */
export function parseCommit(id: string, data: Buffer): Commit {
  // ids come from git (cat-file headers and commit headers): full SHAs by construction
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = split === -1 ? text : text.slice(0, split);
  const message = split === -1 ? '' : text.slice(split + 2);
  const c: Commit = {
    id: id as Sha,
    parentIds: [],
    tree: '' as Sha,
    author: parseSignature(''),
    committer: parseSignature(''),
    message,
  };
  for (const line of headers.split('\n')) {
    if (line.startsWith(' ')) continue; // continuation (gpgsig, mergetag)
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree') c.tree = value as Sha;
    else if (key === 'parent') c.parentIds.push(value as Sha);
    else if (key === 'author') c.author = parseSignature(value);
    else if (key === 'committer') c.committer = parseSignature(value);
  }
  return c;
}

/** Parses a raw tree object: trees first, then blobs, then submodules, each by name. */
export function parseTree(data: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let i = 0;
  while (i < data.length) {
    const sp = data.indexOf(32, i);
    const nul = data.indexOf(0, sp);
    if (sp === -1 || nul === -1) break;
    const mode = data.subarray(i, sp).toString('ascii').padStart(6, '0');
    const name = data.subarray(sp + 1, nul).toString('utf8');
    const id = data.subarray(nul + 1, nul + 21).toString('hex') as Sha;
    const type = mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
    out.push({ id, name, type, mode });
    i = nul + 21;
  }
  const rank = { tree: 0, blob: 1, commit: 2 };
  return out.sort((a, b) => rank[a.type] - rank[b.type] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Parses a raw annotated tag object: target and message. */
export function parseTagObject(data: Buffer): { object: string; type: string; message: string } {
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = split === -1 ? text : text.slice(0, split);
  let message = split === -1 ? '' : text.slice(split + 2);
  const sig = message.indexOf('-----BEGIN PGP SIGNATURE-----');
  if (sig !== -1) message = message.slice(0, sig);
  const get = (k: string) =>
    headers
      .split('\n')
      .find((l) => l.startsWith(k + ' '))
      ?.slice(k.length + 1) ?? '';
  return { object: get('object'), type: get('type'), message: message.replace(/\n$/, '') };
}

/** The title of a commit as GitLab shows it: the first line, cut to 80 characters + "…" when over 100. */
export function commitTitle(message: string): string {
  const first = message.split('\n')[0].trim();
  if (!first) return '--no commit message';
  return first.length > 100 ? first.slice(0, 80) + '…' : first;
}
