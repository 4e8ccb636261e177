import { Bool, Int, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

const INVALID = { invalid: 'is invalid' } as const;

export class ListUsersDto extends PaginationDto {
  /** An exact username (case-insensitive): at most one user, unpaginated. */
  @Str({ allowNul: true }) username?: string;
  /** Username, name and email (email by substring for administrators, by the whole address for others). */
  @Str({ allowNul: true }) search?: string;
  @Bool() active?: boolean;
  @Bool() blocked?: boolean;
}

/**
 * The profile and account attributes of `POST /users` and `PUT /users/:id`. GitLab validates them as
 * a model: a bad value of any of them is listed in the field map with the others' errors
 * (`checkUserAttributes` in user-rules.ts), never a lone `"x" is invalid`.
 */
export class UserAttributesDto {
  @Str(INVALID) skype?: string;
  @Str(INVALID) linkedin?: string;
  @Str(INVALID) twitter?: string;
  @Str(INVALID) website_url?: string;
  @Str(INVALID) bio?: string;
  @Str(INVALID) location?: string;
  @Int({ invalid: 'is not a number' }) projects_limit?: number;
  @Bool(INVALID) admin?: boolean;
  @Bool(INVALID) can_create_group?: boolean;
  @Bool(INVALID) external?: boolean;
  /** With `extern_uid`: links an external identity (LDAP, OAuth provider). */
  @Str({ ...INVALID, trim: true }) provider?: string;
  @Str({ ...INVALID, trim: true }) extern_uid?: string;
}

export class CreateUserDto extends UserAttributesDto {
  @Str({ required: true, trim: true }) email!: string;
  @Str({ required: true }) password!: string;
  @Str({ required: true, trim: true }) username!: string;
  @Str({ required: true, trim: true }) name!: string;
  /** False skips the confirmation of the email address (`confirmed_at` stays null). */
  @Bool(INVALID) confirm?: boolean;
}

export class UpdateUserDto extends UserAttributesDto {
  @Str({ ...INVALID, trim: true }) email?: string;
  @Str(INVALID) password?: string;
  @Str({ ...INVALID, trim: true }) username?: string;
  @Str({ ...INVALID, trim: true }) name?: string;
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
