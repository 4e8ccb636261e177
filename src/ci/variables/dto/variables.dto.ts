import { Str } from '../../../common/dto/fields';

export class CreateVariableDto {
  @Str({ required: true }) key!: string;
  @Str({ required: true }) value!: string;
}

export class UpdateVariableDto {
  @Str({ required: true }) value!: string;
}
