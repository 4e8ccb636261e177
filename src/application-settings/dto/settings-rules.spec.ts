import { toDto } from '../../common/dto/validation.pipe';
import { UpdateApplicationSettingsDto } from './application-settings.dto';
import { checkSettings, visibilityLevel } from './settings-rules';

const check = (raw: Record<string, unknown>) => checkSettings(toDto(UpdateApplicationSettingsDto, raw));
const errorsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): { message: Record<string, string[]> } }).body().message;
  }
  throw new Error('no error');
};

describe('application settings (DTO + field-map rules)', () => {
  it('converts GitLab inputs into changes', () => {
    expect(
      check({
        default_projects_limit: '7',
        signup_enabled: 'False',
        avatar_enabled: '0',
        home_page_url: '',
        default_project_visibility: 2,
        restricted_visibility_levels: '20,0,1',
        domain_whitelist: 'Example.COM, *.corp.org',
      }),
    ).toEqual({
      defaultProjectsLimit: 7,
      signupEnabled: false,
      gravatarEnabled: false,
      homePageUrl: null,
      defaultProjectVisibility: 20,
      restrictedVisibilityLevels: [0, 10, 20],
      restrictedSignupDomains: ['example.com', '*.corp.org'],
    });
  });

  it('CI settings: shared_runners_enabled and max_artifacts_size are columns; the reset flag is only checked', () => {
    expect(check({ shared_runners_enabled: 'false', max_artifacts_size: '5', reset_runners_registration_token: 'true' })).toEqual({
      sharedRunnersEnabled: false,
      maxArtifactsSize: 5,
    });
    expect(errorsOf(() => check({ max_artifacts_size: 0, reset_runners_registration_token: 'maybe' }))).toEqual({
      max_artifacts_size: ['must be greater than 0'],
      reset_runners_registration_token: ['is invalid'],
    });
  });

  it('null and absent fields change nothing', () => {
    expect(check({ signup_enabled: null, sign_in_text: null })).toEqual({});
  });

  it('names every invalid field at once, bad values and bad ranges alike, in GitLab order', () => {
    const e = errorsOf(() =>
      check({
        default_branch_protection: 7,
        signup_enabled: 'maybe',
        default_projects_limit: 'x',
        restricted_visibility_levels: '0,x',
        max_attachment_size: 0,
      }),
    );
    expect(e).toEqual({
      default_projects_limit: ['is invalid'],
      signup_enabled: ['is invalid'],
      default_branch_protection: ['is not included in the list'],
      restricted_visibility_levels: ['is invalid'],
      max_attachment_size: ['must be between 1 and 10000'],
    });
    expect(Object.keys(e as object)).toEqual([
      'default_projects_limit',
      'signup_enabled',
      'default_branch_protection',
      'restricted_visibility_levels',
      'max_attachment_size',
    ]);
  });

  it('reads visibility 1 and 2 as 10 and 20, refuses others', () => {
    expect([0, 1, 2, 10, 20, 5].map(visibilityLevel)).toEqual([0, 10, 20, 10, 20, undefined]);
    expect(errorsOf(() => check({ restricted_visibility_levels: [-1] }))).toEqual({ restricted_visibility_levels: ['is not included in the list'] });
  });
});
