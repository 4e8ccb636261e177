import { Str } from '../../common/dto/fields';

/**
 * `POST /oauth/token` (RFC 6749): grants `password` (`username`, `password`) and `refresh_token`.
 * Missing values are the service's RFC errors (`invalid_request`), not GitLab's "not given".
 */
export class TokenRequestDto {
  @Str() grant_type?: string;
  @Str() username?: string;
  @Str() password?: string;
  @Str() refresh_token?: string;
}

/** `POST /oauth/revoke` (RFC 7009). */
export class RevokeTokenDto {
  @Str() token?: string;
}
