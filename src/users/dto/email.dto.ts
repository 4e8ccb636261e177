import { Str } from '../../common/dto/fields';

export class CreateEmailDto {
  @Str({ required: true, trim: true }) email!: string;
}
