import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GroupMember, ProjectMember } from './member.entities';
import { MembershipsRepository } from './memberships.repository';
import { MembershipsService } from './memberships.service';

/**
 * The members area's service for other areas' transactions (MembershipsService). Separate from
 * MembersModule, whose API needs the projects and groups areas: those import this one instead.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ProjectMember, GroupMember])],
  providers: [MembershipsRepository, MembershipsService],
  exports: [MembershipsService],
})
export class MembershipsModule {}
