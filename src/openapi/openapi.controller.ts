import { Controller, Get } from '@nestjs/common';
import { Public } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { OpenApiService } from './openapi.service';
import { ApiOkResponse } from '@nestjs/swagger';

@Controller(API)
export class OpenApiController {
  constructor(private readonly openapi: OpenApiService) {}

  /**
   * `GET /api/v3/openapi.json`, the OpenAPI 3 document of this server (no authentication;
   * docs/openapi.json holds a copy). The HTTP pipeline drops the `.json` suffix of API paths.
   */
  @Public()
  @ApiOkResponse({ schema: { type: 'object' }, description: 'this document (OpenAPI 3)' })
  @Get('openapi')
  document() {
    return this.openapi.get();
  }
}
