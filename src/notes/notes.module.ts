import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Note } from './note.entity';
import { IssuesModule } from '../issues/issues.module';
import { MergeRequestsModule } from '../merge-requests/merge-requests.module';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetsModule } from '../snippets/snippets.module';
import { NoteViews } from './note-views.service';
import { NotesController } from './notes.controller';
import { NotesService } from './notes.service';

@Module({
  imports: [TypeOrmModule.forFeature([Note]), ProjectsModule, IssuesModule, SnippetsModule, MergeRequestsModule],
  controllers: [NotesController],
  providers: [NotesService, NoteViews],
})
export class NotesModule {}
