import { ApiProperty } from '@nestjs/swagger';

/**
 * Property groups several response classes share, declared once. They are no schemas of their own (no
 * `@ResponseEntity`). The order a class declares its properties in is the wire order (the schema's
 * `required` list keeps it, and expectSchema checks the presenters' keys against it), so a group is
 * either the start of a class (`class X extends Group`) or, where it stands in the middle, joined in
 * with `IntersectionType(Head, Group)` from @nestjs/swagger, which declares Head's properties, then the
 * group's, on a new class the response class extends.
 */

/** What a project's numbered item (milestone, issue, merge request) starts with. */
export abstract class ProjectItemFields {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  iid!: number;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  title!: string;
}

/** What a CI run on a commit (a pipeline, a commit status) starts with. */
export abstract class CommitRunFields {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  sha!: string;

  @ApiProperty({ type: String, nullable: true })
  ref!: string | null;
}

/** When a build or a commit status was created, started and finished. */
export class RunTimeFields {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  started_at!: Date | string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: Date | string | null;
}

/** What a deleted row ends with (a DELETE's record of an issue, a merge request; a trigger). */
export class DeletedRowFields {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  deleted_at!: Date | string | null;
}

/** What every commit summary shows (a build's commit, and the repository's commit views); not a schema of its own. */
export abstract class CommitSummaryFields {
  @ApiProperty({ type: String })
  id!: string;

  @ApiProperty({ type: String })
  short_id!: string;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  author_name!: string;

  @ApiProperty({ type: String })
  author_email!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String })
  message!: string;
}
