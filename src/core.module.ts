import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GitAuthBan } from './throttle/git-auth-ban';
import { LoginAttemptsRepository } from './throttle/login-attempts.repository';
import { LoginThrottle } from './throttle/login-throttle';
import { SecretsService } from './common/crypto/secrets.service';
import { GitlabValidationPipe } from './common/dto/validation.pipe';
import { ErrorsFilter } from './common/errors/errors.filter';
import { Logger } from './common/logging/logger';
import { RateLimiter } from './common/http/rate-limit';
import { RateLimitRepository } from './common/http/rate-limit.repository';
import { APP_CONFIG, AppConfig } from './config/config';
import { DbNotifications } from './database/notifications';
import { RepositoryLocks } from './database/repository-locks';
import { PoolStats } from './database/pool-stats';
import { OpenApiModule } from './openapi/openapi.module';
import { Transactions } from './database/transactions';
import { attachEntities, Database } from './database/data-source';

/** Config, database, secrets, logging, the login throttle and git's authentication ban (both own `login_attempts`), the global filter, pipe and interceptors (the guard: AuthModule). */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, db: Database): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        PassportModule,
        // The data source is opened (and migrated) before Nest starts; here it takes the entities
        // that the area modules declare with TypeOrmModule.forFeature (autoLoadEntities).
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ type: 'postgres', autoLoadEntities: true }),
          dataSourceFactory: async (options) => attachEntities(db, options?.entities),
        }),
        OpenApiModule,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        Logger,
        Transactions,
        DbNotifications,
        RepositoryLocks,
        PoolStats,
        SecretsService,
        LoginAttemptsRepository,
        LoginThrottle,
        GitAuthBan,
        RateLimitRepository,
        RateLimiter,
        { provide: APP_FILTER, useClass: ErrorsFilter },
        { provide: APP_PIPE, useClass: GitlabValidationPipe },
      ],
      exports: [APP_CONFIG, Transactions, DbNotifications, RepositoryLocks, PoolStats, Logger, SecretsService, LoginThrottle, GitAuthBan, RateLimiter],
    };
  }
}
