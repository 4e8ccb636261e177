import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/caller/caller';
import { Input } from '../common/params/params';
import { RevokeTokenDto, TokenRequestDto } from './dto/oauth.dto';
import { presentIssuedToken, presentRevoked } from './oauth.presenter';
import { OauthService } from './oauth.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { EmptyResponse } from '../openapi/response-types';
import { OAuthTokenResponse } from './oauth.responses';

/** OAuth 2.0 endpoints (RFC 6749 answers: 200, `Cache-Control: no-store`, on errors too). */
@Public()
@Controller('oauth')
export class OauthController {
  constructor(private readonly oauth: OauthService) {}

  @ApiOkResponse({ type: OAuthTokenResponse })
  @Post('token')
  @HttpCode(200)
  async token(@Input() dto: TokenRequestDto, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    return presentIssuedToken(await this.oauth.token(dto, req.ip ?? ''));
  }

  @ApiOkResponse({ type: EmptyResponse, description: 'an empty object, whether or not the token existed' })
  @Post('revoke')
  @HttpCode(200)
  async revoke(@Input() dto: RevokeTokenDto) {
    await this.oauth.revoke(dto);
    return presentRevoked();
  }
}
