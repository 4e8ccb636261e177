import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';
import { UserBasicResponse } from '../users/users.responses';

@ResponseEntity('Member')
export class MemberResponse extends UserBasicResponse {
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
