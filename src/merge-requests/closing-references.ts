/**
 * GitLab's default issue closing pattern (8.8, `gitlab.yml` issue_closing_pattern):
 *
 *   ((?:[Cc]los(?:e[sd]?|ing)|[Ff]ix(?:e[sd]|ing)?|[Rr]esolv(?:e[sd]?|ing))(:?) +
 *     (?:(?:issues? +)?%{issue_ref}(?:(?:, *| +and +)?)|([A-Z][A-Z0-9_]+-\d+))+)
 *
 * where `%{issue_ref}` is `#123`, `namespace/project#123` or a full issue URL. Pure: the caller
 * resolves the references (and decides who may see them).
 */
export interface IssueReference {
  /** `namespace/project`, or null for the current project. */
  project: string | null;
  iid: number;
}

const PATH = '[A-Za-z0-9_.\\-]+(?:/[A-Za-z0-9_.\\-]+)+';
const REF = `(?:(?:${PATH})?#\\d+|https?://[^\\s/]+(?:/[^\\s/]+)*?/${PATH.replace('(?:/', '(?:/')}/issues/\\d+)`;
const CLOSING = new RegExp(
  `(?:[Cc]los(?:e[sd]?|ing)|[Ff]ix(?:e[sd]|ing)?|[Rr]esolv(?:e[sd]?|ing)):? +(?:(?:issues? +)?${REF}(?:(?:, *| +and +)?)|[A-Z][A-Z0-9_]+-\\d+)+`,
  'g',
);
const SHORT = new RegExp(`(?:(${PATH}))?#(\\d+)`, 'g');
const URL_REF = /^https?:\/\/[^\s/]+(?:\/[^\s]*)?$/;

/** Issue references named by closing phrases in `text`, in order of appearance, without duplicates. */
export function closingReferences(text: string, externalUrl: string): IssueReference[] {
  const out: IssueReference[] = [];
  const seen = new Set<string>();
  const base = externalUrl.replace(/\/+$/, '');
  const add = (project: string | null, iid: number) => {
    const key = `${project ?? ''}#${iid}`;
    if (iid > 0 && iid <= 2147483647 && !seen.has(key)) {
      seen.add(key);
      out.push({ project, iid });
    }
  };
  for (const m of text.matchAll(CLOSING)) {
    const phrase = m[0];
    // full URLs first (they contain no `#`), then the short forms
    for (const word of phrase.split(/[\s,]+/)) {
      if (!URL_REF.test(word)) continue;
      if (!word.startsWith(base + '/')) continue;
      const u = /^(.+)\/issues\/(\d+)$/.exec(word.slice(base.length + 1));
      if (u) add(u[1], Number(u[2]));
    }
    for (const s of phrase.replace(/https?:\/\/\S+/g, ' ').matchAll(SHORT)) add(s[1] ?? null, Number(s[2]));
  }
  return out;
}
