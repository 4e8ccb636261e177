import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { OauthAccessToken } from './oauth-access-token.entity';
import { OauthController } from './oauth.controller';
import { OauthRepository } from './oauth.repository';
import { OauthService } from './oauth.service';

@Module({
  imports: [TypeOrmModule.forFeature([OauthAccessToken]), UsersModule],
  controllers: [OauthController],
  providers: [OauthService, OauthRepository],
  exports: [OauthService],
})
export class OauthModule {}
