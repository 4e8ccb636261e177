import 'reflect-metadata';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { loadConfig } from './config/config';
import { Database } from './database/data-source';
import { buildOpenApiDocument, canonicalJson } from './openapi/openapi.builder';

/**
 * `npm run openapi`: writes docs/openapi.json (or the path given) from the app's routes. The app is
 * built in Nest's preview mode (module graph and route metadata, no providers started), so no
 * database is needed; the output is the same document `GET /api/v3/openapi.json` serves.
 */
async function main(): Promise<void> {
  const out = resolve(process.argv[2] ?? join(__dirname, '..', 'docs', 'openapi.json'));
  const dataDir = mkdtempSync(join(tmpdir(), 'openapi-'));
  try {
    const config = loadConfig({
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      LOG_LEVEL: 'silent',
      SECRET_KEY: 'openapi-document-generation-only-0123456789',
    });
    const app = await NestFactory.create(AppModule.forRoot(config, {} as Database), { preview: true, logger: false });
    const json = canonicalJson(buildOpenApiDocument(app));
    await app.close();
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, json);
    process.stdout.write(`wrote ${out} (${Object.keys((JSON.parse(json) as { paths: object }).paths).length} paths)\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`openapi: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
