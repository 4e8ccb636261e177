import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Namespace } from './namespace.entity';
import { NamespacesController } from './namespaces.controller';
import { NamespacesRepository } from './namespaces.repository';
import { NamespacesService } from './namespaces.service';

@Module({
  imports: [TypeOrmModule.forFeature([Namespace])],
  controllers: [NamespacesController],
  providers: [NamespacesService, NamespacesRepository],
  exports: [NamespacesService, NamespacesRepository],
})
export class NamespacesModule {}
