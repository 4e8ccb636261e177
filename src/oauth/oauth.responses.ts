import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('OAuthToken')
export class OAuthTokenResponse {
  @ApiProperty({ type: String })
  access_token!: string;

  @ApiProperty({ type: String })
  token_type!: string;

  @ApiProperty({ type: String })
  refresh_token!: string;

  @ApiProperty({ type: String })
  scope!: string;

  @ApiProperty({ type: 'integer' })
  created_at!: number;
}
