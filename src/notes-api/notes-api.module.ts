import { Module } from '@nestjs/common';
import { IssuesModule } from '../issues/issues.module';
import { MergeRequestsModule } from '../merge-requests/merge-requests.module';
import { NotesModule } from '../notes/notes.module';
import { SystemNotesModule } from '../notes/system-notes.module';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetsModule } from '../snippets/snippets.module';
import { UsersModule } from '../users/users.module';
import { CrossReferences } from './cross-references.service';
import { NotesController } from './notes.controller';
import { NoteViews } from './note-views.service';
import { NotesService } from './notes.service';

/**
 * The notes API: comments on issues, merge requests and snippets, found through their areas (rows: the
 * notes area), and the cross-reference notes that mentions leave (CrossReferences).
 */
@Module({
  imports: [NotesModule, SystemNotesModule, ProjectsModule, UsersModule, IssuesModule, SnippetsModule, MergeRequestsModule],
  controllers: [NotesController],
  providers: [NotesService, NoteViews, CrossReferences],
})
export class NotesApiModule {}
