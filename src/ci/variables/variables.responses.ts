import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('Variable')
export class VariableResponse {
  @ApiProperty({ type: String })
  key!: string;

  @ApiProperty({ type: String, description: 'shown to masters and owners only' })
  value!: string;
}
