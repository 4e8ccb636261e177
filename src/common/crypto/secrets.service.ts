import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import bcrypt from 'bcryptjs';
import { APP_CONFIG, AppConfig } from '../../config/config';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const BCRYPT_COST = 10;

/**
 * Secrets at rest: tokens are looked up by a keyed digest (HMAC-SHA256); tokens the API must show
 * again are also kept encrypted (AES-256-GCM); passwords are bcrypt hashes. Keys derive from SECRET_KEY.
 */
@Injectable()
export class SecretsService {
  private readonly digestKey: Buffer;
  private readonly encryptionKey: Buffer;
  /**
   * A real hash (cost 10) to compare against when the user does not exist, so timing does not tell.
   * A constant, not one computed at start (a synchronous bcrypt at every boot); the answer is false
   * whatever it matches, since `verifyPassword` also requires a hash of a real user.
   */
  private readonly dummyHash = '$2b$10$Dd4BZAWsm7RjN.y4skMyAeZjMzIVeCKFdadQ1UwOgvk.uu.dmFTLO';

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'secretKey'>) {
    this.digestKey = Buffer.from(hkdfSync('sha256', config.secretKey, Buffer.alloc(0), 'token-digest', 32));
    this.encryptionKey = Buffer.from(hkdfSync('sha256', config.secretKey, Buffer.alloc(0), 'token-encryption', 32));
  }

  /** A random token of `length` characters from [A-Za-z0-9]. */
  generateToken(length = 20): string {
    let out = '';
    for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
    return out;
  }

  digest(token: string): string {
    return createHmac('sha256', this.digestKey).update(token, 'utf8').digest('hex');
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1') throw new Error('unknown encryption version');
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }

  hashPassword(password: string): Promise<string> {
    return bcrypt.hash(password, BCRYPT_COST);
  }

  /** Constant-time check; with no hash (unknown user) it still spends a bcrypt comparison. */
  async verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
    const ok = await bcrypt.compare(password, hash ?? this.dummyHash);
    return ok && hash !== undefined;
  }

  safeEqual(a: string, b: string): boolean {
    const ha = createHash('sha256').update(a).digest();
    const hb = createHash('sha256').update(b).digest();
    return timingSafeEqual(ha, hb);
  }
}
