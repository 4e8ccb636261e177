import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('UserBasic', 'User summary: author, assignee, member.')
export class UserBasicResponse {
  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  username!: string;

  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, enum: ['active', 'blocked', 'ldap_blocked'] })
  state!: string;

  @ApiProperty({ type: String, description: 'Gravatar URL, or null when Gravatar is disabled', nullable: true })
  avatar_url!: string | null;

  @ApiProperty({ type: String })
  web_url!: string;
}

@ResponseEntity('Author', 'Author of a note, issue or snippet: the user summary plus `created_at`.')
export class AuthorResponse extends UserBasicResponse {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, description: 'only for administrator viewers', required: false })
  email?: string;
}

@ResponseEntity('User', 'A user as a normal viewer sees it.')
export class UserResponse extends UserBasicResponse {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: Boolean })
  is_admin!: boolean;

  @ApiProperty({ type: String, nullable: true })
  bio!: string | null;

  @ApiProperty({ type: String, nullable: true })
  location!: string | null;

  @ApiProperty({ type: String })
  skype!: string;

  @ApiProperty({ type: String })
  linkedin!: string;

  @ApiProperty({ type: String })
  twitter!: string;

  @ApiProperty({ type: String })
  website_url!: string;
}

@ResponseEntity('UserFull', 'A user as an administrator sees it.')
export class UserFullResponse extends UserResponse {
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_sign_in_at!: Date | string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  confirmed_at!: Date | string | null;

  @ApiProperty({ type: String })
  email!: string;

  @ApiProperty({ type: 'integer' })
  theme_id!: number;

  @ApiProperty({ type: 'integer' })
  color_scheme_id!: number;

  @ApiProperty({ type: 'integer' })
  projects_limit!: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  current_sign_in_at!: Date | string | null;

  @ApiProperty({ type: () => [IdentityResponse] })
  identities!: IdentityResponse[];

  @ApiProperty({ type: Boolean })
  can_create_group!: boolean;

  @ApiProperty({ type: Boolean })
  can_create_project!: boolean;

  @ApiProperty({ type: Boolean })
  two_factor_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  external!: boolean;
}

@ResponseEntity('UserLogin', 'The current user (GET /user, POST /session).')
export class UserLoginResponse extends UserFullResponse {
  @ApiProperty({ type: String })
  private_token!: string;
}

@ResponseEntity('SSHKey')
export class SSHKeyResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  key!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;
}

@ResponseEntity('SSHKeyWithUser')
export class SSHKeyWithUserResponse extends SSHKeyResponse {
  @ApiProperty({ type: () => UserFullResponse })
  user!: UserFullResponse;
}

@ResponseEntity('Email')
export class EmailResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  email!: string;
}

@ResponseEntity('Identity')
export class IdentityResponse {
  @ApiProperty({ type: String })
  provider!: string;

  @ApiProperty({ type: String })
  extern_uid!: string;
}
