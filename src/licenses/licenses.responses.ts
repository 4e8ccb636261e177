import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('License')
export class LicenseResponse {
  @ApiProperty({ type: String })
  key!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  nickname!: string | null;

  @ApiProperty({ type: Boolean })
  featured!: boolean;

  @ApiProperty({ type: Boolean, description: 'same as featured' })
  popular!: boolean;

  @ApiProperty({ type: String })
  html_url!: string;

  @ApiProperty({ type: String, nullable: true })
  source_url!: string | null;

  @ApiProperty({ type: String })
  description!: string;

  @ApiProperty({ type: [String] })
  conditions!: string[];

  @ApiProperty({ type: [String] })
  permissions!: string[];

  @ApiProperty({ type: [String] })
  limitations!: string[];

  @ApiProperty({ type: String })
  content!: string;
}
