import { Bool, Str } from '../../common/dto/fields';

export class CreateBranchDto {
  @Str({ required: true, trim: true }) branch_name!: string;
  /** A branch, tag or SHA. */
  @Str({ required: true, trim: true }) ref!: string;
}

/** GitLab 8.17's flags; protecting a protected branch again changes only the flags given. */
export class ProtectBranchDto {
  @Bool() developers_can_push?: boolean;
  @Bool() developers_can_merge?: boolean;
}
