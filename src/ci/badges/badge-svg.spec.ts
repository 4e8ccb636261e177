import { buildBadge, coverageBadge, escapeXml, renderBadge } from './badge-svg';
import { parseBadgePath } from './badges.service';

describe('badges (GitLab 8.17 templates)', () => {
  it("build: 8.17's status colours; any other status is drawn as unknown; fixed 38 + 54 widths", () => {
    const colours = Object.fromEntries(
      ['success', 'failed', 'running', 'pending', 'canceled', 'skipped', 'unknown', 'created', 'manual', 'constructor'].map((s) => [
        s,
        buildBadge(s).valueColor,
      ]),
    );
    expect(colours).toEqual({
      success: '#4c1',
      failed: '#e05d44',
      running: '#dfb317',
      pending: '#dfb317',
      canceled: '#9f9f9f',
      skipped: '#9f9f9f',
      unknown: '#9f9f9f',
      created: '#9f9f9f',
      manual: '#9f9f9f',
      constructor: '#9f9f9f',
    });
    expect(buildBadge('success')).toMatchObject({ keyText: 'build', valueText: 'success', keyWidth: 38, valueWidth: 54 });
  });

  it('coverage: whole percentages, ranges as 8.17 (first match wins), unknown wider', () => {
    const at = (n: number | undefined) => [coverageBadge(n).valueText, coverageBadge(n).valueColor];
    expect([100, 95, 94, 90, 89, 75, 74, 0, 101, -1, undefined].map(at)).toEqual([
      ['100%', '#4c1'],
      ['95%', '#4c1'],
      ['94%', '#a3c51c'],
      ['90%', '#a3c51c'],
      ['89%', '#dfb317'],
      ['75%', '#dfb317'],
      ['74%', '#e05d44'],
      ['0%', '#e05d44'],
      ['101%', '#9f9f9f'],
      ['-1%', '#9f9f9f'],
      ['unknown', '#9f9f9f'],
    ]);
    expect([coverageBadge(90).valueWidth, coverageBadge(undefined).valueWidth, coverageBadge(90).keyWidth]).toEqual([36, 58, 62]);
  });

  it("renders 8.17's document: widths, anchors and texts", () => {
    const svg = renderBadge(buildBadge('success'));
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="92" height="20">/);
    expect(svg).toContain('<text x="19" y="14">\n        build\n      </text>');
    expect(svg).toContain('<text x="65" y="14">\n        success\n      </text>');
    expect(svg).toContain('d="M38 0 h54 v20 H38 z"');
  });

  it('escapes every value written into the document', () => {
    expect(escapeXml(`<a href="x" title='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
    const svg = renderBadge({ keyText: '<script>alert(1)</script>', valueText: '"/><foreignObject>', keyWidth: 10, valueWidth: 10, valueColor: '"><script>' });
    expect(svg).not.toMatch(/<script|<foreignObject|"><script/);
    expect(svg.match(/<[a-zA-Z]+/g)!.every((tag) => ['<svg', '<linearGradient', '<stop', '<mask', '<rect', '<g', '<path', '<text'].includes(tag))).toBe(true);
  });

  it('badge paths: the ref (with slashes) and the badge; anything else is no badge', () => {
    expect(parseBadgePath('master/build.svg')).toEqual({ ref: 'master', kind: 'build' });
    expect(parseBadgePath('feature/x/coverage.svg')).toEqual({ ref: 'feature/x', kind: 'coverage' });
    for (const p of ['build.svg', 'master/build.png', 'master/build', 'master/other.svg', '/build.svg']) expect([p, parseBadgePath(p)]).toEqual([p, undefined]);
  });
});
