import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Snippet } from './snippet.entity';
import { ProjectsModule } from '../projects/projects.module';
import { SystemNotesModule } from '../notes/system-notes.module';
import { UsersModule } from '../users/users.module';
import { SnippetViews } from './snippet-views.service';
import { SnippetsController } from './snippets.controller';
import { SnippetsRepository } from './snippets.repository';
import { SnippetsService } from './snippets.service';

@Module({
  imports: [TypeOrmModule.forFeature([Snippet]), ProjectsModule, UsersModule, SystemNotesModule],
  controllers: [SnippetsController],
  providers: [SnippetsService, SnippetsRepository, SnippetViews],
  exports: [SnippetsService],
})
export class SnippetsModule {}
