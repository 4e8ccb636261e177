import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OauthAccessToken } from './oauth-access-token.entity';
import { UsersModule } from '../users/users.module';
import { OauthController } from './oauth.controller';
import { OauthService } from './oauth.service';

@Module({ imports: [TypeOrmModule.forFeature([OauthAccessToken]), UsersModule], controllers: [OauthController], providers: [OauthService] })
export class OauthModule {}
