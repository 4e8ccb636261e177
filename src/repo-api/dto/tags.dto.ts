import { Str } from '../../common/dto/fields';

export class CreateTagDto {
  @Str({ required: true, trim: true }) tag_name!: string;
  /** A branch, tag or SHA. */
  @Str({ required: true, trim: true }) ref!: string;
  /** Makes the tag annotated. */
  @Str() message?: string;
  @Str() release_description?: string;
}

export class ReleaseDto {
  @Str({ required: true }) description!: string;
}
