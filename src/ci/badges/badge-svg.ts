/**
 * GitLab 8.17's badges (lib/gitlab/badge/*, app/views/projects/badges/badge.svg.erb): a grey key on the
 * left ("build", "coverage"), a coloured value on the right, at 8.17's fixed widths. Pure code: every
 * value written into the document is escaped, whatever its origin.
 */

export interface Badge {
  keyText: string;
  valueText: string;
  keyWidth: number;
  valueWidth: number;
  valueColor: string;
}

const KEY_COLOR = '#555';

/** 8.17's Gitlab::Badge::Build::Template::STATUS_COLOR; any other status is drawn as `unknown`. */
export const BUILD_STATUS_COLOR: Readonly<Record<string, string>> = {
  success: '#4c1',
  failed: '#e05d44',
  running: '#dfb317',
  pending: '#dfb317',
  canceled: '#9f9f9f',
  skipped: '#9f9f9f',
  unknown: '#9f9f9f',
};

/** 8.17's Gitlab::Badge::Coverage::Template::STATUS_COLOR. */
export const COVERAGE_COLOR = { good: '#4c1', acceptable: '#a3c51c', medium: '#dfb317', low: '#e05d44', unknown: '#9f9f9f' } as const;

/** The build badge: "build" and the pipeline's status as 8.17 names it (`success`, `failed`, …, `unknown`). */
export function buildBadge(status: string): Badge {
  const color = Object.prototype.hasOwnProperty.call(BUILD_STATUS_COLOR, status) ? BUILD_STATUS_COLOR[status] : BUILD_STATUS_COLOR.unknown;
  return { keyText: 'build', valueText: status, keyWidth: 38, valueWidth: 54, valueColor: color };
}

/**
 * The coverage badge: "coverage" and a whole percentage (`95%`), or `unknown`. The colour follows
 * 8.17's ranges, first match winning (`95..100` good, `90..95` acceptable, `75..90` medium, `0..75` low).
 */
export function coverageBadge(coverage: number | undefined): Badge {
  const known = coverage !== undefined && Number.isFinite(coverage);
  let color: string = COVERAGE_COLOR.unknown;
  if (known) {
    if (coverage >= 95 && coverage <= 100) color = COVERAGE_COLOR.good;
    else if (coverage >= 90 && coverage <= 95) color = COVERAGE_COLOR.acceptable;
    else if (coverage >= 75 && coverage <= 90) color = COVERAGE_COLOR.medium;
    else if (coverage >= 0 && coverage <= 75) color = COVERAGE_COLOR.low;
  }
  return { keyText: 'coverage', valueText: known ? `${coverage}%` : 'unknown', keyWidth: 62, valueWidth: known ? 36 : 58, valueColor: color };
}

/** XML text and attribute escaping: `& < > " '` become character references. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The SVG document of a badge (8.17's template, its values escaped). */
export function renderBadge(b: Badge): string {
  const e = (v: string | number) => escapeXml(String(v));
  const width = b.keyWidth + b.valueWidth;
  const keyAnchor = Math.floor(b.keyWidth / 2);
  const valueAnchor = b.keyWidth + Math.floor(b.valueWidth / 2);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${e(width)}" height="20">
  <linearGradient id="b" x2="0" y2="100%">
    <stop offset="0" stop-color="#bbb" stop-opacity=".1"/>
    <stop offset="1" stop-opacity=".1"/>
  </linearGradient>

  <mask id="a">
    <rect width="${e(width)}" height="20" rx="3" fill="#fff"/>
  </mask>

  <g mask="url(#a)">
    <path fill="${e(KEY_COLOR)}"
          d="M0 0 h${e(b.keyWidth)} v20 H0 z"/>
    <path fill="${e(b.valueColor)}"
          d="M${e(b.keyWidth)} 0 h${e(b.valueWidth)} v20 H${e(b.keyWidth)} z"/>
    <path fill="url(#b)"
          d="M0 0 h${e(width)} v20 H0 z"/>
  </g>

  <g fill="#fff" text-anchor="middle">
    <g font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">
      <text x="${e(keyAnchor)}" y="15" fill="#010101" fill-opacity=".3">
        ${e(b.keyText)}
      </text>
      <text x="${e(keyAnchor)}" y="14">
        ${e(b.keyText)}
      </text>
      <text x="${e(valueAnchor)}" y="15" fill="#010101" fill-opacity=".3">
        ${e(b.valueText)}
      </text>
      <text x="${e(valueAnchor)}" y="14">
        ${e(b.valueText)}
      </text>
    </g>
  </g>
</svg>
`;
}
