import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Member')
export class MemberResponse {
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

  @ApiProperty({ type: 'integer', description: '10 guest, 20 reporter, 30 developer, 40 master, 50 owner' })
  access_level!: number;
}

@ResponseEntity('AccessRevoked', 'Removing a user who is not a member.')
export class AccessRevokedResponse {
  @ApiProperty({ type: String, enum: ['Access revoked'] })
  message!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  id!: number | null;
}
