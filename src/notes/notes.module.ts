import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../users/users.module';
import { NoteRecords } from './note-records.service';
import { Note } from './note.entity';
import { NotesRepository } from './notes.repository';

/** The notes table's rows for the notes API (NoteRecords); the noteable areas write system notes through SystemNotesModule. */
@Module({
  imports: [TypeOrmModule.forFeature([Note]), UsersModule],
  providers: [NotesRepository, NoteRecords],
  exports: [NoteRecords],
})
export class NotesModule {}
