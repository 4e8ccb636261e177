import { Module } from '@nestjs/common';
import { OpenApiController } from './openapi.controller';
import { OpenApiService } from './openapi.service';

/** `GET /api/v3/openapi.json`: the OpenAPI document built from the app's routes (see openapi.builder.ts). */
@Module({ controllers: [OpenApiController], providers: [OpenApiService], exports: [OpenApiService] })
export class OpenApiModule {}
