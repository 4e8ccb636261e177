import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { OauthController } from './oauth.controller';
import { OauthService } from './oauth.service';

@Module({ imports: [UsersModule], controllers: [OauthController], providers: [OauthService] })
export class OauthModule {}
