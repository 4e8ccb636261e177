import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { DataSource } from 'typeorm';
import { AuthGuard } from './common/auth/auth.guard';
import { AuthService } from './common/auth/auth.service';
import { BearerStrategy } from './common/auth/bearer.strategy';
import { LoginThrottle } from './common/auth/login-throttle';
import { SecretsService } from './common/crypto/secrets.service';
import { ErrorsFilter } from './common/errors/errors.filter';
import { JsonResponseInterceptor } from './common/http/json-response.interceptor';
import { Logger } from './common/http/logger';
import { PaginationInterceptor } from './common/pagination/pagination.interceptor';
import { APP_CONFIG, AppConfig } from './config/config';
import { Database } from './database/data-source';

/** Config, database, secrets, logging and the global guard, filter and interceptor. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, db: Database): DynamicModule {
    return {
      module: CoreModule,
      imports: [PassportModule],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: DataSource, useValue: db.dataSource },
        { provide: 'DATABASE', useValue: db },
        Logger,
        SecretsService,
        AuthService,
        LoginThrottle,
        BearerStrategy,
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ErrorsFilter },
        { provide: APP_INTERCEPTOR, useClass: PaginationInterceptor },
        { provide: APP_INTERCEPTOR, useClass: JsonResponseInterceptor },
      ],
      exports: [APP_CONFIG, DataSource, 'DATABASE', Logger, SecretsService, AuthService, LoginThrottle],
    };
  }
}
