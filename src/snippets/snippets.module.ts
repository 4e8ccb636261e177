import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Snippet } from './snippet.entity';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetViews } from './snippet-views.service';
import { SnippetsController } from './snippets.controller';
import { SnippetsService } from './snippets.service';

@Module({
  imports: [TypeOrmModule.forFeature([Snippet]), ProjectsModule],
  controllers: [SnippetsController],
  providers: [SnippetsService, SnippetViews],
  exports: [SnippetsService],
})
export class SnippetsModule {}
