import { Bool, Str } from '../../common/dto/fields';

export class CreateBranchDto {
  @Str({ required: true, trim: true }) branch_name!: string;
  /** A branch, tag or SHA. */
  @Str({ required: true, trim: true }) ref!: string;
}

export class ProtectBranchDto {
  @Bool() developers_can_push?: boolean;
}
