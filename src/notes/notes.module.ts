import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Note } from './note.entity';
import { IssuesModule } from '../issues/issues.module';
import { MergeRequestsModule } from '../merge-requests/merge-requests.module';
import { ProjectsModule } from '../projects/projects.module';
import { SnippetsModule } from '../snippets/snippets.module';
import { UsersModule } from '../users/users.module';
import { NoteViews } from './note-views.service';
import { NotesController } from './notes.controller';
import { NotesRepository } from './notes.repository';
import { NotesService } from './notes.service';

@Module({
  imports: [TypeOrmModule.forFeature([Note]), ProjectsModule, UsersModule, IssuesModule, SnippetsModule, MergeRequestsModule],
  controllers: [NotesController],
  providers: [NotesService, NotesRepository, NoteViews],
})
export class NotesModule {}
