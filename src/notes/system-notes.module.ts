import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Note } from './note.entity';
import { SystemNotesRepository } from './system-notes.repository';
import { SystemNotesService } from './system-notes.service';

/**
 * The notes area's service for the noteable areas' transactions (SystemNotesService). Separate from
 * NotesModule, whose API needs issues, merge requests and snippets: those import this one instead.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Note])],
  providers: [SystemNotesRepository, SystemNotesService],
  exports: [SystemNotesService],
})
export class SystemNotesModule {}
