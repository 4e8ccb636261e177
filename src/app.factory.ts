import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { databaseFailure } from './common/errors/startup-error';
import { clientErrorResponse, httpPipeline } from './common/http/http-pipeline';
import { Logger } from './common/logging/logger';
import { RateLimiter } from './common/http/rate-limit';
import { ResponseAdapter } from './common/http/response-adapter';
import { RunnerPollRoute } from './ci/runner-api/runner-poll.route';
import { AppConfig } from './config/config';
import { Database, openDatabase } from './database/data-source';
import { httpMetrics } from './metrics/registry';
import { OpenApiService } from './openapi/openapi.service';
import { PagesHost } from './pages/pages-host';
import { RootUser } from './users/root-user';

export interface App {
  app: NestExpressApplication;
  db: Database;
  close: () => Promise<void>;
}

/** Opens the database (migrating it), builds the Nest app with the shared HTTP pipeline, ensures `root`. */
export async function createApp(config: AppConfig, existingDb?: Database): Promise<App> {
  const db =
    existingDb ??
    (await openDatabase(config).catch((e: unknown) => {
      throw config.databaseUrl ? databaseFailure(e, config.databaseUrl) : e; // unreachable PostgreSQL: one clear line
    }));
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, db), new ResponseAdapter(config.externalUrl), {
    bodyParser: false,
    logger: config.logLevel === 'debug' ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'],
  });
  app.set('query parser', 'extended');
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  app.disable('etag');
  const logger = app.get(Logger);
  // Pages hosts (<namespace>.PAGES_DOMAIN) are answered right after the request log line, before anything of the API
  const hostHandler = app.get(PagesHost).middleware();
  for (const mw of httpPipeline(logger, { bodyLimit: '10mb', corsOrigins: config.corsOrigins, metrics: httpMetrics, hostHandler })) app.use(mw);
  const limiter = app.get(RateLimiter);
  if (limiter.enabled) app.use(limiter.middleware()); // off by default: not even installed
  app.use(app.get(RunnerPollRoute).middleware()); // the runners' poll, before the router (see there)
  await app.init();
  app.getHttpServer().on('clientError', clientErrorResponse);
  app.get(OpenApiService).attach(app); // GET /api/v3/openapi.json, built on first request
  await app.get(RootUser).ensure();
  return {
    app,
    db,
    async close() {
      await app.close();
      if (!existingDb) await db.close();
    },
  };
}
