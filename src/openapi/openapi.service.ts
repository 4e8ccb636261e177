import { INestApplication, Injectable } from '@nestjs/common';
import { OpenAPIObject } from '@nestjs/swagger';
import { NotFound } from '../common/errors/domain-errors';
import { buildOpenApiDocument, canonicalJson } from './openapi.builder';

/**
 * The app's OpenAPI document, built from its routes on first request and kept (routes do not change
 * while the process runs). The app hands itself over once started (app.factory.ts).
 */
@Injectable()
export class OpenApiService {
  private app?: INestApplication;
  private document?: OpenAPIObject;

  attach(app: INestApplication): void {
    this.app = app;
  }

  /** The document with its keys sorted, as docs/openapi.json holds it. */
  get(): OpenAPIObject {
    if (!this.document) {
      if (!this.app) throw new NotFound();
      this.document = JSON.parse(canonicalJson(buildOpenApiDocument(this.app))) as OpenAPIObject;
    }
    return this.document;
  }
}
