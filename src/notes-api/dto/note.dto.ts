import { ApiProperty } from '@nestjs/swagger';
import { DateTime, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET .../:noteable/:noteable_id/notes` and the legacy `.../comments`. */
export class ListNotesDto extends PaginationDto {}

/*
 * The required text fields are declared required in the OpenAPI document but checked by the service
 * (`"body" not given`), after the noteable is resolved: an invisible noteable answers its 404 before a
 * missing body answers 400, as GitLab does. A NUL byte is `"body" is invalid` here, before anything.
 */

/** `POST .../notes`. */
export class CreateNoteDto {
  @ApiProperty({ required: true }) @Str() body?: string;
  /** Honoured on issue notes for owners and administrators only. */
  @DateTime() created_at?: Date;
}

/** The legacy `POST .../comments` of merge requests: the text arrives as `note` (required, checked by the service). */
export class CreateCommentDto {
  @ApiProperty({ required: true }) @Str() note?: string;
}

/** `PUT .../notes/:note_id`: `body` required (checked by the service, after the note is found). */
export class UpdateNoteDto {
  @ApiProperty({ required: true }) @Str() body?: string;
}
