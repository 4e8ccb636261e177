import { Str } from '../../common/dto/fields';

export class CreateLabelDto {
  @Str({ required: true, trim: true }) name!: string;
  /** `#RGB` or `#RRGGBB` (checked by the service: GitLab answers a field map). */
  @Str({ required: true, trim: true }) color!: string;
  /** Blank clears it. */
  @Str() description?: string;
}

/** `PUT /labels`: `name` picks the label; at least one of `new_name`, `color`, `description` changes it. */
export class UpdateLabelDto {
  @Str({ required: true, trim: true }) name!: string;
  @Str({ trim: true }) new_name?: string;
  @Str({ trim: true }) color?: string;
  @Str() description?: string;
}

/** `DELETE /labels?name=`. */
export class DeleteLabelDto {
  @Str({ required: true, trim: true }) name!: string;
}
