import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetViews } from './snippet-views.service';
import { SnippetsController } from './snippets.controller';
import { SnippetsService } from './snippets.service';

@Module({
  imports: [ProjectsModule],
  controllers: [SnippetsController],
  providers: [SnippetsService, SnippetViews],
  exports: [SnippetsService],
})
export class SnippetsModule {}
