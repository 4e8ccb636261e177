import { createContext, Script } from 'node:vm';

/** How much of a trace's end the coverage regex reads (a coverage line is printed near the end). */
export const COVERAGE_TRACE_TAIL = 1024 * 1024;
/** The time one coverage regex may take over that text, in milliseconds (a hostile pattern gives up). */
export const COVERAGE_REGEX_TIMEOUT_MS = 100;
/** A pattern longer than this is not evaluated (ci_builds.coverage_regex and the project setting are varchar(255)). */
const MAX_PATTERN = 255;

// the last match of `re` in `s`, evaluated where a time limit can stop it: [whole match, ...groups]
const context = createContext({ re: /$^/g, s: '', out: null as (string | undefined)[] | null });
const lastMatch = new Script(`
  out = null;
  for (const m of s.matchAll(re)) { out = Array.from(m); if (m[0] === '') re.lastIndex++; }
`);

/**
 * GitLab 8.17's `Ci::Build#extract_coverage`: the last match of the regex in the trace (with groups,
 * its last group), then the first number in it, as a float. Bounded: only `text` (the caller passes the
 * trace's last COVERAGE_TRACE_TAIL bytes) and at most COVERAGE_REGEX_TIMEOUT_MS of matching; an invalid
 * or too expensive pattern gives no coverage (8.17 ignored any error there too).
 */
export function extractCoverage(text: string, regex: string | null | undefined): number | null {
  if (!regex || regex.length > MAX_PATTERN) return null;
  const source = regex.length > 1 && regex.startsWith('/') && regex.endsWith('/') ? regex.slice(1, -1) : regex;
  let re: RegExp;
  try {
    re = new RegExp(source, 'g');
  } catch {
    return null;
  }
  context.re = re;
  context.s = text;
  context.out = null;
  try {
    lastMatch.runInContext(context, { timeout: COVERAGE_REGEX_TIMEOUT_MS });
  } catch {
    return null;
  }
  const m = context.out as (string | undefined)[] | null;
  context.s = '';
  if (!m) return null;
  const matched = m.length > 1 ? m[m.length - 1] : m[0];
  const number = matched === undefined ? null : /\d+(\.\d+)?/.exec(matched);
  if (!number) return null;
  const value = Number.parseFloat(number[0]);
  return Number.isFinite(value) ? value : null;
}
