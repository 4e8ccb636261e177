import { toDto } from '../../common/dto/validation.pipe';
import { checkUserAttributes } from './user-rules';
import { CreateUserDto, UpdateUserDto } from './user.dto';

const body = (extra: Record<string, unknown> = {}) => ({
  email: 'a@example.com',
  password: 'long-enough',
  username: 'alice',
  name: 'Alice',
  ...extra,
});

const errorsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): unknown }).body();
  }
  throw new Error('no error');
};

describe('user attributes (DTO + field-map rules)', () => {
  it('required fields first, in GitLab order: "x" not given', () => {
    expect(errorsOf(() => toDto(CreateUserDto, { name: 'x' }))).toEqual({ message: '400 (Bad request) "email" not given' });
    expect(errorsOf(() => toDto(CreateUserDto, body({ username: '  ' })))).toEqual({ message: '400 (Bad request) "username" not given' });
  });

  it('normalises valid input for the entity', () => {
    const attrs = checkUserAttributes(
      toDto(CreateUserDto, body({ email: ' a@example.com ', website_url: 'https://x', projects_limit: '3', admin: 'true', confirm: 'no' })),
    );
    expect(attrs).toMatchObject({ email: 'a@example.com', websiteUrl: 'https://x', projectsLimit: 3, admin: true, confirm: false });
  });

  it('lists every problem at once, bad values included, in GitLab field order', () => {
    const e = errorsOf(() =>
      checkUserAttributes(toDto(UpdateUserDto, { admin: 'maybe', bio: 'x'.repeat(256), email: 'nope', projects_limit: 'lots', username: { a: 1 } })),
    ) as { message: Record<string, string[]> };
    expect(e.message).toEqual({
      email: ['is invalid'],
      username: ['is invalid'],
      bio: ['is too long (maximum is 255 characters)'],
      projects_limit: ['is not a number'],
      admin: ['is invalid'],
    });
    expect(Object.keys(e.message)).toEqual(['email', 'username', 'bio', 'projects_limit', 'admin']);
  });

  it('blank values, path rules, password length and the provider pair', () => {
    const e = errorsOf(() => checkUserAttributes(toDto(UpdateUserDto, { name: ' ', username: 'Admin', password: 'short', provider: 'ldap' }))) as {
      message: Record<string, string[]>;
    };
    expect(e.message).toEqual({
      username: ['is a reserved name'],
      name: ["can't be blank"],
      password: ['is too short (minimum is 8 characters)'],
      extern_uid: ["can't be blank"],
    });
  });

  it('confirm is read on create only', () => {
    expect(checkUserAttributes(toDto(UpdateUserDto, { confirm: 'false' })).confirm).toBeUndefined();
  });
});
