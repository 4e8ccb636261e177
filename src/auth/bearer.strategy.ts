import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { AuthService } from './auth.service';

/**
 * OAuth 2.0 bearer tokens (`Authorization: Bearer`, `access_token` in the query or body),
 * extracted by passport-http-bearer and checked against the stored token digests.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly auth: AuthService) {
    super();
  }

  async validate(token: string) {
    return (await this.auth.userByAccessToken(token)) ?? false;
  }
}
