import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Note } from './note.entity';
import { IssuesModule } from '../issues/issues.module';
import { MergeRequestsModule } from '../merge-requests/merge-requests.module';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetsModule } from '../snippets/snippets.module';
import { UsersModule } from '../users/users.module';
import { CrossReferences } from './cross-references.service';
import { NoteViews } from './note-views.service';
import { NotesController } from './notes.controller';
import { NotesRepository } from './notes.repository';
import { NotesService } from './notes.service';
import { SystemNotesModule } from './system-notes.module';

@Module({
  imports: [TypeOrmModule.forFeature([Note]), ProjectsModule, UsersModule, IssuesModule, SnippetsModule, MergeRequestsModule, SystemNotesModule],
  controllers: [NotesController],
  providers: [NotesService, NotesRepository, NoteViews, CrossReferences],
})
export class NotesModule {}
