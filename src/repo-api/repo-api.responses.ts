import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { AuthorResponse } from '../users/users.responses';
import { CommitRunFields, CommitSummaryFields, RunTimeFields } from '../openapi/response-fields';
import { ResponseEntity } from '../openapi/response-types';

/**
 * The repository's commit views (Commit, CommitDetail): the summary, with the SHAs described (a
 * property declared again keeps its place and adds to its metadata), and the parents.
 */
export abstract class RepoCommitFields extends CommitSummaryFields {
  @ApiProperty({ description: 'full SHA' })
  declare id: string;

  @ApiProperty({ description: 'the first 8 hex digits of the SHA' })
  declare short_id: string;

  @ApiProperty({ type: [String] })
  parent_ids!: string[];
}

@ResponseEntity('Commit', 'RepoCommit (lists, compare, merge request commits).')
export class CommitResponse extends RepoCommitFields {
  @ApiProperty({ type: Boolean, description: 'in lists (spec: Commit variants), always false', required: false })
  allow_failure?: boolean;
}

@ResponseEntity('CommitDetail', 'RepoCommitDetail (GET .../commits/:sha).')
export class CommitDetailResponse extends RepoCommitFields {
  @ApiProperty({ type: String, format: 'date-time' })
  committed_date!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  authored_date!: Date | string;

  @ApiProperty({ type: String, description: 'CI status of the commit', nullable: true })
  status!: string | null;
}

@ResponseEntity('GitCommit', 'The raw commit embedded in branches and tags.')
export class GitCommitResponse {
  @ApiProperty({ type: String })
  id!: string;

  @ApiProperty({ type: String })
  message!: string;

  @ApiProperty({ type: [String] })
  parent_ids!: string[];

  @ApiProperty({ type: String, format: 'date-time' })
  authored_date!: Date | string;

  @ApiProperty({ type: String })
  author_name!: string;

  @ApiProperty({ type: String })
  author_email!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  committed_date!: Date | string;

  @ApiProperty({ type: String })
  committer_name!: string;

  @ApiProperty({ type: String })
  committer_email!: string;
}

@ResponseEntity('Branch')
export class BranchResponse {
  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: () => GitCommitResponse })
  commit!: GitCommitResponse;

  @ApiProperty({ type: Boolean })
  protected!: boolean;

  @ApiProperty({ type: Boolean })
  developers_can_push!: boolean;

  @ApiProperty({ type: Boolean, description: 'Developers may merge into it (GitLab 8.17).' })
  developers_can_merge!: boolean;
}

@ResponseEntity('BranchName')
export class BranchNameResponse {
  @ApiProperty({ type: String })
  branch_name!: string;
}

@ResponseEntity('Tag')
export class TagResponse {
  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, description: 'null for a lightweight tag', nullable: true })
  message!: string | null;

  @ApiProperty({ type: () => GitCommitResponse })
  commit!: GitCommitResponse;

  @ApiProperty({ type: () => ReleaseResponse, nullable: true })
  release!: ReleaseResponse | null;
}

@ResponseEntity('TagName')
export class TagNameResponse {
  @ApiProperty({ type: String })
  tag_name!: string;
}

@ResponseEntity('Release')
export class ReleaseResponse {
  @ApiProperty({ type: String })
  tag_name!: string;

  @ApiProperty({ type: String })
  description!: string;
}

@ResponseEntity('TreeEntry')
export class TreeEntryResponse {
  @ApiProperty({ type: String })
  id!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, enum: ['tree', 'blob', 'commit'] })
  type!: string;

  @ApiProperty({ type: String })
  mode!: string;
}

@ResponseEntity('DiffEntry')
export class DiffEntryResponse {
  @ApiProperty({ type: String })
  old_path!: string;

  @ApiProperty({ type: String })
  new_path!: string;

  @ApiProperty({ type: String, nullable: true })
  a_mode!: string | null;

  @ApiProperty({ type: String, nullable: true })
  b_mode!: string | null;

  @ApiProperty({ type: String })
  diff!: string;

  @ApiProperty({ type: Boolean })
  new_file!: boolean;

  @ApiProperty({ type: Boolean })
  renamed_file!: boolean;

  @ApiProperty({ type: Boolean })
  deleted_file!: boolean;

  @ApiProperty({ type: Boolean, required: false })
  too_large?: boolean;
}

@ResponseEntity('CommitComment')
export class CommitCommentResponse {
  @ApiProperty({ type: String })
  note!: string;

  @ApiProperty({ type: String, nullable: true })
  path!: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  line!: number | null;

  @ApiProperty({ type: String, enum: ['new', 'old'], nullable: true })
  line_type!: string | null;

  @ApiProperty({ type: () => AuthorResponse, nullable: true })
  author!: AuthorResponse | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;
}

/** A commit status up to its times; not a schema of its own. */
class CommitStatusHead extends CommitRunFields {
  @ApiProperty({ type: String, enum: ['pending', 'running', 'success', 'failed', 'canceled'] })
  status!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  target_url!: string | null;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
}

@ResponseEntity('CommitStatus')
export class CommitStatusResponse extends IntersectionType(CommitStatusHead, RunTimeFields) {
  @ApiProperty({ type: Boolean })
  allow_failure!: boolean;

  @ApiProperty({ type: () => AuthorResponse, nullable: true })
  author!: AuthorResponse | null;
}

@ResponseEntity('CompareResult')
export class CompareResultResponse {
  @ApiProperty({ type: () => CommitResponse, nullable: true })
  commit!: CommitResponse | null;

  @ApiProperty({ type: () => [CommitResponse] })
  commits!: CommitResponse[];

  @ApiProperty({ type: () => [DiffEntryResponse] })
  diffs!: DiffEntryResponse[];

  @ApiProperty({ type: Boolean })
  compare_timeout!: boolean;

  @ApiProperty({ type: Boolean })
  compare_same_ref!: boolean;
}

@ResponseEntity('Contributor')
export class ContributorResponse {
  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  email!: string;

  @ApiProperty({ type: 'integer' })
  commits!: number;

  @ApiProperty({ type: 'integer' })
  additions!: number;

  @ApiProperty({ type: 'integer' })
  deletions!: number;
}

@ResponseEntity('RepositoryFile')
export class RepositoryFileResponse {
  @ApiProperty({ type: String })
  file_name!: string;

  @ApiProperty({ type: String })
  file_path!: string;

  @ApiProperty({ type: 'integer' })
  size!: number;

  @ApiProperty({ type: String, enum: ['base64'] })
  encoding!: string;

  @ApiProperty({ type: String, description: 'Base64' })
  content!: string;

  @ApiProperty({ type: String })
  ref!: string;

  @ApiProperty({ type: String })
  blob_id!: string;

  @ApiProperty({ type: String })
  commit_id!: string;

  @ApiProperty({ type: String })
  last_commit_id!: string;
}

@ResponseEntity('FileCommit', 'Answer of file writes.')
export class FileCommitResponse {
  @ApiProperty({ type: String })
  file_name!: string;

  @ApiProperty({ type: String })
  file_path!: string;

  @ApiProperty({ type: String })
  branch_name!: string;
}
