import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { OauthModule } from '../oauth/oauth.module';
import { UsersModule } from '../users/users.module';
import { AuthGuard } from './auth.guard';
import { AuthCache } from './auth-cache';
import { AuthService } from './auth.service';
import { BearerStrategy } from './bearer.strategy';

/**
 * Authentication: the one global guard, the bearer strategy and AuthService (exported globally: git
 * over HTTP authenticates with it too). Users and OAuth tokens are read through those areas'
 * services (UserDirectory, OauthService); the login throttle stays in CoreModule (the users area uses it).
 */
@Global()
@Module({
  imports: [UsersModule, OauthModule],
  providers: [AuthCache, AuthService, BearerStrategy, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [AuthService],
})
export class AuthModule {}
