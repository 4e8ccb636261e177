import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { NamespaceRecordResponse } from '../namespaces/namespaces.responses';
import { AuthorResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

/** How a project is named (ProjectSummary, Project); not a schema of its own. */
class ProjectNameFields {
  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  name_with_namespace!: string;

  @ApiProperty({ type: String })
  path!: string;

  @ApiProperty({ type: String })
  path_with_namespace!: string;
}

/** A project's id; not a schema of its own. */
class ProjectId {
  @ApiProperty({ type: 'integer' })
  id!: number;
}

@ResponseEntity('ProjectSummary')
export class ProjectSummaryResponse extends IntersectionType(ProjectId, ProjectNameFields) {}

@ResponseEntity('ProjectPermissions')
export class ProjectPermissionsResponse {
  @ApiProperty({ type: () => ProjectAccessResponse, nullable: true })
  project_access!: ProjectAccessResponse | null;

  @ApiProperty({ type: () => ProjectAccessResponse, nullable: true })
  group_access!: ProjectAccessResponse | null;
}

/** A project's view up to its names; not a schema of its own. */
class ProjectHead extends ProjectId {
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String, nullable: true })
  default_branch!: string | null;

  @ApiProperty({ type: [String] })
  tag_list!: string[];

  @ApiProperty({ type: Boolean })
  public!: boolean;

  @ApiProperty({ type: Boolean })
  archived!: boolean;

  @ApiProperty({ type: 'integer', enum: [0, 10, 20], description: '0 private, 10 internal, 20 public' })
  visibility_level!: number;

  @ApiProperty({ type: String })
  ssh_url_to_repo!: string;

  @ApiProperty({ type: String })
  http_url_to_repo!: string;

  @ApiProperty({ type: String })
  web_url!: string;

  @ApiProperty({ type: () => AuthorResponse, description: 'the user summary with created_at; only for projects in a user namespace', required: false })
  owner?: AuthorResponse;
}

@ResponseEntity('Project')
export class ProjectResponse extends IntersectionType(ProjectHead, ProjectNameFields) {
  @ApiProperty({ type: Boolean })
  issues_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  merge_requests_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  wiki_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  builds_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  snippets_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  container_registry_enabled!: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  last_activity_at!: Date | string;

  @ApiProperty({ type: Boolean })
  shared_runners_enabled!: boolean;

  @ApiProperty({ type: Boolean, description: 'Git LFS on for this project (and the instance)' })
  lfs_enabled!: boolean;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the creator no longer exists' })
  creator_id!: number | null;

  @ApiProperty({ type: () => NamespaceRecordResponse })
  namespace!: NamespaceRecordResponse;

  @ApiProperty({ type: () => ProjectSummaryResponse, description: 'only for forks', required: false })
  forked_from_project?: ProjectSummaryResponse;

  @ApiProperty({ type: String, nullable: true })
  avatar_url!: string | null;

  @ApiProperty({ type: 'integer' })
  star_count!: number;

  @ApiProperty({ type: 'integer' })
  forks_count!: number;

  @ApiProperty({ type: 'integer', description: 'only when issues are enabled', required: false })
  open_issues_count?: number;

  @ApiProperty({
    type: String,
    description: 'only where the caller may administer the project (masters, owners, administrators), in lists too',
    required: false,
  })
  runners_token?: string;

  @ApiProperty({ type: Boolean })
  public_builds!: boolean;

  @ApiProperty({ type: String, nullable: true })
  import_status!: string | null;

  @ApiProperty({ type: () => ProjectPermissionsResponse, description: 'ProjectWithAccess only (GET /projects, /owned, /all, /:id)', required: false })
  permissions?: ProjectPermissionsResponse;
}

@ResponseEntity('ProjectAccess')
export class ProjectAccessResponse {
  @ApiProperty({ type: 'integer' })
  access_level!: number;

  @ApiProperty({ type: 'integer' })
  notification_level!: number;
}
