import { Bool, FieldMapErrors, Int, MAX_SEARCH_LENGTH, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListUsersDto extends PaginationDto {
  /** An exact username (case-insensitive): at most one user (a page of it, with the headers). */
  @Str({ allowNul: true }) username?: string;
  /** Username, name and email (email by substring for administrators, by the whole address for others). */
  @Str({ allowNul: true, max: MAX_SEARCH_LENGTH }) search?: string;
  @Bool() active?: boolean;
  @Bool() blocked?: boolean;
}

/**
 * The profile and account attributes of `POST /users` and `PUT /users/:id`. GitLab validates them as
 * a model: a bad value of any of them is listed in the field map with the others' errors
 * (`@FieldMapErrors()`, merged by `checkUserAttributes` in user-rules.ts), never a lone `"x" is invalid`.
 */
export class UserAttributesDto {
  @Str() skype?: string;
  @Str() linkedin?: string;
  @Str() twitter?: string;
  @Str() website_url?: string;
  @Str() bio?: string;
  @Str() location?: string;
  @Int({ invalid: 'is not a number' }) projects_limit?: number;
  @Bool() admin?: boolean;
  @Bool() can_create_group?: boolean;
  @Bool() external?: boolean;
  /** With `extern_uid`: links an external identity (LDAP, OAuth provider). */
  @Str({ trim: true }) provider?: string;
  @Str({ trim: true }) extern_uid?: string;
}

@FieldMapErrors()
export class CreateUserDto extends UserAttributesDto {
  @Str({ required: true, trim: true }) email!: string;
  @Str({ required: true }) password!: string;
  @Str({ required: true, trim: true }) username!: string;
  @Str({ required: true, trim: true }) name!: string;
  /**
   * 8.17's `user.skip_confirmation! unless confirm`: true requires the email address to be confirmed
   * (`confirmed_at` stays null); false or absent skips that (confirmed now). 8.8's `confirm=false`
   * means the same.
   */
  @Bool() confirm?: boolean;
}

@FieldMapErrors()
export class UpdateUserDto extends UserAttributesDto {
  @Str({ trim: true }) email?: string;
  @Str() password?: string;
  @Str({ trim: true }) username?: string;
  @Str({ trim: true }) name?: string;
}

/**
 * `POST /session`: `login` or `email` (either may hold the username or the email address) and `password`.
 * A NUL byte is not a type error here but a login that cannot exist (SessionService.signIn).
 */
export class SignInDto {
  @Str({ allowNul: true }) email?: string;
  @Str({ allowNul: true }) login?: string;
  @Str({ allowNul: true }) password?: string;
}
