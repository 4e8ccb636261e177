import { Str } from '../../common/dto/fields';

/**
 * `POST /oauth/token` (RFC 6749): grants `password` (`username`, `password`) and `refresh_token`.
 * Missing values are the service's RFC errors (`invalid_request`), not GitLab's "not given"; credentials
 * with NUL bytes are the service's to refuse.
 */
export class TokenRequestDto {
  @Str({ allowNul: true }) grant_type?: string;
  @Str({ allowNul: true }) username?: string;
  @Str({ allowNul: true }) password?: string;
  @Str({ allowNul: true }) refresh_token?: string;
}

/** `POST /oauth/revoke` (RFC 7009). */
export class RevokeTokenDto {
  @Str({ allowNul: true }) token?: string;
}
