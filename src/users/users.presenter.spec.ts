import { User } from './user.entity';
import { presentEmail, presentKey, presentUser, presentUserBasic, presentUserFull, presentUserLogin } from './users.presenter';

/** Key order of GitLab 8.8's user entities (lib/api/entities.rb; ../shared/docs/gitlab-compat.md §2.1). */
const USER_BASIC = ['name', 'username', 'id', 'state', 'avatar_url', 'web_url'];
const USER = [...USER_BASIC, 'created_at', 'is_admin', 'bio', 'location', 'skype', 'linkedin', 'twitter', 'website_url'];
const USER_FULL = [
  ...USER,
  'last_sign_in_at',
  'confirmed_at',
  'email',
  'theme_id',
  'color_scheme_id',
  'projects_limit',
  'current_sign_in_at',
  'identities',
  'can_create_group',
  'can_create_project',
  'two_factor_enabled',
  'external',
];

const ctx = { externalUrl: 'https://git.example.com', gravatarEnabled: true };
const user = {
  id: 7,
  username: 'alice',
  name: 'Alice',
  email: ' Alice@Example.com ',
  state: 'active',
  createdAt: new Date('2016-01-04T15:31:51.081Z'),
  admin: false,
  bio: null,
  location: null,
  skype: '',
  linkedin: '',
  twitter: '',
  websiteUrl: '',
  lastSignInAt: null,
  confirmedAt: null,
  themeId: 1,
  colorSchemeId: 1,
  projectsLimit: 10,
  currentSignInAt: null,
  identities: [{ provider: 'ldapmain', externUid: 'uid=alice' }],
  canCreateGroup: true,
  twoFactorEnabled: false,
  external: false,
} as unknown as User;

describe('users presenter', () => {
  it('UserBasic, User, UserFull and UserLogin keep GitLab 8.8 key order', () => {
    expect(Object.keys(presentUserBasic(user, ctx))).toEqual(USER_BASIC);
    expect(Object.keys(presentUser(user, ctx))).toEqual(USER);
    expect(Object.keys(presentUserFull(user, ctx, { canCreateProject: true }))).toEqual(USER_FULL);
    expect(Object.keys(presentUserLogin(user, ctx, { canCreateProject: true, privateToken: 't' }))).toEqual([...USER_FULL, 'private_token']);
  });

  it('the summary carries no email and no created_at; web_url and the Gravatar URL follow GitLab', () => {
    const basic = presentUserBasic(user, ctx);
    expect(basic).not.toHaveProperty('email');
    expect(basic.web_url).toBe('https://git.example.com/u/alice');
    // md5 of the trimmed, lower-cased email
    expect(basic.avatar_url).toBe('https://www.gravatar.com/avatar/c160f8cc69a4f0bf2b0362752353d060?s=80&d=identicon');
    expect(presentUserBasic(user, { ...ctx, gravatarEnabled: false }).avatar_url).toBeNull();
  });

  it('identities are {provider, extern_uid}; can_create_project is the one given', () => {
    const full = presentUserFull(user, ctx, { canCreateProject: false });
    expect(full.identities).toEqual([{ provider: 'ldapmain', extern_uid: 'uid=alice' }]);
    expect(full.can_create_project).toBe(false);
    expect(presentUserLogin(user, ctx, { canCreateProject: true, privateToken: 'secret' }).private_token).toBe('secret');
  });

  it('SSH keys and emails', () => {
    const key = presentKey({ id: 1, title: 't', key: 'ssh-ed25519 AAAA', createdAt: new Date(0) } as never);
    expect(Object.keys(key)).toEqual(['id', 'title', 'key', 'created_at']);
    expect(Object.keys(presentEmail({ id: 1, email: 'a@b.c' } as never))).toEqual(['id', 'email']);
  });
});
