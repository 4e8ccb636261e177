import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * `page` and `per_page`, which every list takes. Lenient as GitLab is: a value that is not a positive
 * integer falls back to the default (pageRequest clamps and converts), never a 400. List DTOs extend this.
 */
export class PaginationDto {
  @ApiProperty({ type: 'integer', required: false, description: 'page number, from 1' })
  @Allow()
  page?: unknown;

  @ApiProperty({ type: 'integer', required: false, description: 'items per page, 1..100 (default 20)' })
  @Allow()
  per_page?: unknown;
}
