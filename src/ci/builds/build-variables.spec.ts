import { refSlug } from './build-variables';

describe("refSlug (GitLab 8.17's Ci::Build#ref_slug)", () => {
  it.each([
    ['master', 'master'],
    ['Feature/Foo_Bar', 'feature-foo-bar'],
    ['v1.0', 'v1-0'],
    ['ünïcode', '-n-code'],
    // 8.17 trims no dash (9.x does): a ref ending in a separator keeps it
    ['release/', 'release-'],
    ['x'.repeat(70), 'x'.repeat(63)],
  ])('%s → %s', (ref, slug) => expect(refSlug(ref)).toBe(slug));
});
