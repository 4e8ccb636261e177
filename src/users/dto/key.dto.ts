import { Str } from '../../common/dto/fields';

export class CreateKeyDto {
  @Str({ required: true, trim: true }) title!: string;
  /** An OpenSSH public key: rsa (≥ 1024 bits), ed25519 or ecdsa. */
  @Str({ required: true }) key!: string;
}
