import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Version')
export class VersionResponse {
  @ApiProperty({ type: String })
  version!: string;

  @ApiProperty({ type: String })
  revision!: string;
}
