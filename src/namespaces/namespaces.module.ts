import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GroupNamespacesService } from './group-namespaces.service';
import { GroupsRepository } from './groups.repository';
import { Namespace } from './namespace.entity';
import { NamespacesController } from './namespaces.controller';
import { NamespacesRepository } from './namespaces.repository';
import { NamespacesService } from './namespaces.service';

/** The `namespaces` table: users' personal namespaces (NamespacesService) and groups (GroupNamespacesService, for the groups area). */
@Module({
  imports: [TypeOrmModule.forFeature([Namespace])],
  controllers: [NamespacesController],
  providers: [NamespacesService, NamespacesRepository, GroupsRepository, GroupNamespacesService],
  exports: [NamespacesService, GroupNamespacesService],
})
export class NamespacesModule {}
