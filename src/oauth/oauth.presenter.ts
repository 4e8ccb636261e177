import { IssuedToken } from './oauth.service';
import { EmptyResponse } from '../openapi/response-types';
import { OAuthTokenResponse } from './oauth.responses';

/** RFC 6749 §5.1 access token response (Doorkeeper's keys and order). */
export function presentIssuedToken(t: IssuedToken): OAuthTokenResponse {
  return {
    access_token: t.accessToken,
    token_type: 'bearer',
    refresh_token: t.refreshToken,
    scope: t.token.scopes,
    created_at: Math.floor(t.token.createdAt.getTime() / 1000),
  };
}

/** RFC 7009: an empty JSON object, whether or not the token existed. */
export function presentRevoked(): EmptyResponse {
  return {};
}
