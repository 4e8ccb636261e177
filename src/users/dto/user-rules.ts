import { invalidFields } from '../../common/dto/fields';
import { pathErrors } from '../../common/dto/namespace-path';
import { ValidationFailed, ValidationMap } from '../../common/errors/domain-errors';
import { CreateUserDto, UpdateUserDto } from './user.dto';

const EMAIL_FORMAT = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;
const TOO_LONG = 'is too long (maximum is 255 characters)';

/** GitLab's email rule: field-map messages (empty when valid). */
export function emailErrors(email: string): string[] {
  if (email.length > 254) return ['is too long (maximum is 254 characters)'];
  return EMAIL_FORMAT.test(email) ? [] : ['is invalid'];
}

/** The writable user attributes, validated (camelCase, as the entity names them). */
export interface UserAttributes {
  email?: string;
  password?: string;
  username?: string;
  name?: string;
  skype?: string;
  linkedin?: string;
  twitter?: string;
  websiteUrl?: string;
  bio?: string;
  location?: string;
  projectsLimit?: number;
  admin?: boolean;
  canCreateGroup?: boolean;
  external?: boolean;
  confirm?: boolean;
  provider?: string;
  externUid?: string;
}

const PROFILE = [
  ['skype', 'skype'],
  ['linkedin', 'linkedin'],
  ['twitter', 'twitter'],
  ['website_url', 'websiteUrl'],
  ['bio', 'bio'],
  ['location', 'location'],
] as const;

/**
 * Validates user attributes as GitLab's model does, answering every problem at once in one field map
 * (`400 {"message":{"email":["is invalid"],...}}`, fields in GitLab's order): bad values the DTO could not
 * convert, blanks, formats, lengths and ranges. Returns them ready for the entity.
 */
export function checkUserAttributes(dto: CreateUserDto | UpdateUserDto): UserAttributes {
  const bad = invalidFields(dto);
  const errors: ValidationMap = {};
  const add = (field: string, msgs: string[]) => {
    if (msgs.length) errors[field] = [...((errors[field] as string[] | undefined) ?? []), ...msgs];
  };
  const attrs: UserAttributes = {};
  const badValue = (field: string): boolean => {
    if (bad[field] === undefined) return false;
    add(field, bad[field]);
    return true;
  };

  if (!badValue('email') && dto.email !== undefined) {
    add('email', dto.email === '' ? ["can't be blank"] : emailErrors(dto.email));
    attrs.email = dto.email;
  }
  if (!badValue('username') && dto.username !== undefined) {
    add('username', dto.username === '' ? ["can't be blank"] : pathErrors(dto.username));
    attrs.username = dto.username;
  }
  if (!badValue('name') && dto.name !== undefined) {
    add('name', dto.name === '' ? ["can't be blank"] : dto.name.length > 255 ? [TOO_LONG] : []);
    attrs.name = dto.name;
  }
  if (!badValue('password') && dto.password !== undefined) {
    if (dto.password.length < 8) add('password', ['is too short (minimum is 8 characters)']);
    else if (Buffer.byteLength(dto.password) > 72) add('password', ['is too long (maximum is 72 bytes)']);
    attrs.password = dto.password;
  }
  for (const [field, key] of PROFILE) {
    const v = dto[field];
    if (badValue(field) || v === undefined) continue;
    if (v.length > 255) add(field, [TOO_LONG]);
    attrs[key] = v;
  }
  if (!badValue('projects_limit') && dto.projects_limit !== undefined) {
    const limit = dto.projects_limit;
    if (limit < 0) add('projects_limit', ['must be greater than or equal to 0']);
    else if (limit > 2147483647) add('projects_limit', ['must be less than or equal to 2147483647']);
    attrs.projectsLimit = limit;
  }
  if (!badValue('admin')) attrs.admin = dto.admin;
  if (!badValue('can_create_group')) attrs.canCreateGroup = dto.can_create_group;
  if (!badValue('external')) attrs.external = dto.external;
  if (dto instanceof CreateUserDto && !badValue('confirm')) attrs.confirm = dto.confirm;

  const providerBad = badValue('provider');
  const externUidBad = badValue('extern_uid');
  const provider = providerBad ? undefined : dto.provider;
  const externUid = externUidBad ? undefined : dto.extern_uid;
  if ((provider && !externUid) || (!provider && externUid)) {
    add(provider ? 'extern_uid' : 'provider', ["can't be blank"]);
  } else if (provider && externUid) {
    if (provider.length > 255) add('provider', [TOO_LONG]);
    if (externUid.length > 255) add('extern_uid', [TOO_LONG]);
    attrs.provider = provider;
    attrs.externUid = externUid;
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return attrs;
}
