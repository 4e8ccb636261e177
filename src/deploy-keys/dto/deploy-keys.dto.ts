import { Bool, Str } from '../../common/dto/fields';

export class CreateDeployKeyDto {
  @Str({ required: true, trim: true }) title!: string;
  /** An OpenSSH public key, with a user key's rules (rsa ≥ 2048 bits, ed25519, ecdsa). */
  @Str({ required: true }) key!: string;
  /** Write access for a new key (GitLab 8.17's "Write access allowed"); a key that already exists keeps its own. */
  @Bool() can_push?: boolean;
}
