import { environmentErrors, environmentType, expandVariables, generateSlug, NAME_MESSAGE, validUrl } from './environment-rules';

describe('environment rules (GitLab 8.17 app/models/environment.rb)', () => {
  // 8.17's spec/models/environment_spec.rb '#generate_slug' table
  const SUFFIX = '-[a-z0-9]{6}';
  it.each([
    ['staging-12345678901234567', 'staging-123456789' + SUFFIX],
    ['9-staging-123456789012345', 'env-9-staging-123' + SUFFIX],
    ['staging-1234567890123456', 'staging-1234567890123456'],
    ['production', 'production'],
    ['PRODUCTION', 'production' + SUFFIX],
    ['review/1-foo', 'review-1-foo' + SUFFIX],
    ['1-foo', 'env-1-foo' + SUFFIX],
    ['1/foo', 'env-1-foo' + SUFFIX],
    ['foo-', 'foo' + SUFFIX],
    ['foo--bar', 'foo-bar' + SUFFIX],
    ['foo**bar', 'foo-bar' + SUFFIX],
    ['*-foo', 'env-foo' + SUFFIX],
    ['staging-12345678-', 'staging-12345678' + SUFFIX],
    ['staging-12345678-01234567', 'staging-12345678' + SUFFIX],
  ])('slug of %s matches %s', (name, pattern) => {
    expect(generateSlug(name)).toMatch(new RegExp(`^${pattern}$`));
  });

  it('name: blank, length and format messages in Rails order; taken first after blank', () => {
    expect(environmentErrors({ name: '', externalUrl: null })).toEqual({ name: ["can't be blank", NAME_MESSAGE] });
    expect(environmentErrors({ name: 'ok', externalUrl: null }, { name: true })).toEqual({ name: ['has already been taken'] });
    expect(environmentErrors({ name: 'review/$CI_BUILD_REF_NAME {x}. y_z-1', externalUrl: null })).toEqual({});
    expect(environmentErrors({ name: 'a"b', externalUrl: null })).toEqual({ name: [NAME_MESSAGE] });
    expect(environmentErrors({ name: 'x'.repeat(256), externalUrl: null })).toEqual({ name: ['is too long (maximum is 255 characters)'] });
  });

  it('URL: http, https, ssh and git URLs only (addressable_url)', () => {
    for (const ok of ['https://example.com', 'http://a.b/c?d=e#f', 'ssh://git@host:22/x', 'git://host/repo.git', 'https://user:pw@h/%20x'])
      expect(validUrl(ok)).toBe(true);
    for (const bad of ['test.gitlab.com', 'javascript:alert(1)', 'ftp://x', 'HTTP://x', 'https://a b', 'https://x/<script>', 'https:'])
      expect(validUrl(bad)).toBe(false);
    expect(environmentErrors({ name: 'x', externalUrl: 'nope' }, { externalUrl: true })).toEqual({
      external_url: ['has already been taken', 'must be a valid URL'],
    });
  });

  it('environment_type is the first segment of a name with a slash', () => {
    expect(environmentType('review/app')).toBe('review');
    expect(environmentType('production')).toBeNull();
  });

  it('expands $X, ${X} and %X% (the last value of a key wins; unknown ones are removed)', () => {
    const vars = [
      { key: 'A', value: '1' },
      { key: 'B', value: 'two' },
      { key: 'A', value: 'one' },
    ];
    expect(expandVariables('review/$A-${B}-%A%-$MISSING-$', vars)).toBe('review/one-two-one--$');
  });
});
