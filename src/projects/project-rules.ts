import { visibilityLevel } from '../application-settings/application-settings.service';
import { invalidFields } from '../common/dto/fields';
import { Conflict, isUniqueViolation, MissingAttribute, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { CreateProjectDto, UpdateProjectDto } from './dto/project.dto';

const NAME_FORMAT = /^[\p{L}\p{N}_][\p{L}\p{N}_. +-]*$/u;
const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
export const PROJECT_NAME_MESSAGE = "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'.";
export const PROJECT_PATH_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";

/** Rails' `parameterize`: the path a project gets from its name. */
export function parameterize(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Project settings checked against GitLab's model validations (entity field names). */
export interface ProjectAttributes {
  name?: string;
  path?: string;
  description?: string | null;
  defaultBranch?: string;
  issuesEnabled?: boolean;
  mergeRequestsEnabled?: boolean;
  wikiEnabled?: boolean;
  buildsEnabled?: boolean;
  snippetsEnabled?: boolean;
  containerRegistryEnabled?: boolean;
  lfsEnabled?: boolean;
  sharedRunnersEnabled?: boolean;
  publicBuilds?: boolean;
  visibilityLevel?: number;
  namespaceId?: number;
  importUrl?: string;
}

/**
 * GitLab's project validations on a create or update DTO, as one field map (with the fields the DTO
 * could not convert). On create, `name` is required unless `path` is given (then name = path), and
 * `path` defaults to the parameterized name. `visibility_level` wins over `public`; 1 and 2 are read
 * as 10 and 20.
 */
export function projectAttributes(dto: CreateProjectDto, mode: 'create'): ProjectAttributes;
export function projectAttributes(dto: UpdateProjectDto, mode: 'update'): ProjectAttributes;
export function projectAttributes(dto: CreateProjectDto | UpdateProjectDto, mode: 'create' | 'update'): ProjectAttributes {
  const errors: ValidationMap = invalidFields(dto);
  const add = (f: string, m: string) => ((errors[f] as string[] | undefined) ?? (errors[f] = [])).push(m);
  const attrs: ProjectAttributes = {};

  let name = dto.name?.trim();
  let path = dto.path?.trim();
  if (mode === 'create') {
    if (name === undefined || name === '') {
      if (!path) throw new MissingAttribute('name');
      name = path;
    }
    if (path === undefined || path === '') path = parameterize(name);
  }
  if (name !== undefined) {
    if (name === '') add('name', "can't be blank");
    else if (name.length > 255) add('name', 'is too long (maximum is 255 characters)');
    else if (!NAME_FORMAT.test(name)) add('name', PROJECT_NAME_MESSAGE);
    attrs.name = name;
  }
  if (path !== undefined) {
    if (path === '') add('path', "can't be blank");
    else if (path.length > 255) add('path', 'is too long (maximum is 255 characters)');
    else if (!PATH_FORMAT.test(path) || /\.(git|atom)$/i.test(path)) add('path', PROJECT_PATH_MESSAGE);
    attrs.path = path;
  }
  if (dto.description !== undefined) {
    if (dto.description.length > 65535) add('description', 'is too long (maximum is 65535 characters)');
    attrs.description = dto.description;
  }
  const flags = {
    issuesEnabled: dto.issues_enabled,
    mergeRequestsEnabled: dto.merge_requests_enabled,
    wikiEnabled: dto.wiki_enabled,
    buildsEnabled: dto.builds_enabled,
    snippetsEnabled: dto.snippets_enabled,
    containerRegistryEnabled: dto.container_registry_enabled,
    lfsEnabled: dto.lfs_enabled,
    sharedRunnersEnabled: dto.shared_runners_enabled,
    publicBuilds: dto.public_builds,
  };
  for (const [key, v] of Object.entries(flags)) if (v !== undefined) (attrs as Record<string, unknown>)[key] = v;
  if (dto.visibility_level !== undefined) {
    const mapped = visibilityLevel(dto.visibility_level);
    if (mapped === undefined) add('visibility_level', 'is not included in the list');
    else attrs.visibilityLevel = mapped;
  } else if (dto.public !== undefined) {
    attrs.visibilityLevel = dto.public ? 20 : 0;
  }
  if (mode === 'update') {
    const branch = (dto as UpdateProjectDto).default_branch?.trim();
    if (branch) attrs.defaultBranch = branch;
  } else {
    const create = dto as CreateProjectDto;
    if (create.namespace_id !== undefined) attrs.namespaceId = create.namespace_id;
    const importUrl = create.import_url?.trim();
    if (importUrl) {
      if (importUrl.length > 2048) add('import_url', 'is too long (maximum is 2048 characters)');
      attrs.importUrl = importUrl;
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return attrs;
}

export const VISIBILITY_LABEL: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

/** A level the administrator restricted is refused to non-administrators (422 on `visibility_level`). */
export function assertVisibilityAllowed(user: { admin: boolean }, level: number, restricted: number[] | null): void {
  if (user.admin || !restricted?.includes(level)) return;
  throw new ValidationFailed({
    visibility_level: [`${VISIBILITY_LABEL[level]} visibility has been restricted by your GitLab administrator`],
  });
}

function takenFields(e: unknown): Record<string, string[]> | undefined {
  if (isUniqueViolation(e, 'projects_namespace_path_key')) return { path: ['has already been taken'] };
  if (isUniqueViolation(e, 'projects_namespace_name_key')) return { name: ['has already been taken'] };
  return undefined;
}

/** Raises the 409 of a name or path another project took meanwhile (unique index), or rethrows. */
export function rethrowTaken(e: unknown): never {
  const taken = takenFields(e);
  if (taken) throw new Conflict(taken);
  throw e;
}
