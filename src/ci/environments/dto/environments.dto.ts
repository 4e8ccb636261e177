import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { Str } from '../../../common/dto/fields';

/** 8.17's `optional :slug, absence: {…}`: any `slug` given is refused before anything else. */
class NoSlug {
  @ApiProperty({ required: false, description: 'refused: the slug is generated from the name, once' })
  @Allow()
  slug?: unknown;
}

export class CreateEnvironmentDto extends NoSlug {
  @Str({ required: true, blank: true, description: 'the environment name' }) name!: string;
  @Str({ description: 'the URL where it is viewable' }) external_url?: string;
}

export class UpdateEnvironmentDto extends NoSlug {
  @Str({ description: 'the new name (the slug stays)' }) name?: string;
  @Str({ description: 'the new URL' }) external_url?: string;
}
