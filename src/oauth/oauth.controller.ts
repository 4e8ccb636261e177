import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/decorators';
import { Input, Params } from '../common/params/params';
import { OauthService } from './oauth.service';

/** OAuth 2.0 endpoints (RFC 6749 answers: 200, `Cache-Control: no-store`). */
@Public()
@Controller('oauth')
export class OauthController {
  constructor(private readonly oauth: OauthService) {}

  @Post('token')
  @HttpCode(200)
  async token(@Input() p: Params, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    return this.oauth.token(p, req.ip ?? '');
  }

  @Post('revoke')
  @HttpCode(200)
  async revoke(@Input() p: Params) {
    await this.oauth.revoke(p);
    return {};
  }
}
