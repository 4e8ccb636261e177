import { visibilityLevel } from '../application-settings/application-settings.service';
import { InvalidAttribute, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';

const NAME_FORMAT = /^[\p{L}\p{N}_][\p{L}\p{N}_. +-]*$/u;
const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
export const PROJECT_NAME_MESSAGE =
  "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'.";
export const PROJECT_PATH_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";

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
  sharedRunnersEnabled?: boolean;
  publicBuilds?: boolean;
  visibilityLevel?: number;
  namespaceId?: number;
  importUrl?: string;
}

const FLAGS: [string, keyof ProjectAttributes][] = [
  ['issues_enabled', 'issuesEnabled'],
  ['merge_requests_enabled', 'mergeRequestsEnabled'],
  ['wiki_enabled', 'wikiEnabled'],
  ['builds_enabled', 'buildsEnabled'],
  ['snippets_enabled', 'snippetsEnabled'],
  ['container_registry_enabled', 'containerRegistryEnabled'],
  ['shared_runners_enabled', 'sharedRunnersEnabled'],
  ['public_builds', 'publicBuilds'],
];

/**
 * Reads and validates project attributes. On create, `name` is required unless `path` is given
 * (then name = path), and `path` defaults to the parameterized name. `visibility_level` wins over
 * `public`; 1 and 2 are read as 10 and 20.
 */
export function readProjectAttributes(p: Params, mode: 'create' | 'update'): ProjectAttributes {
  const errors: ValidationMap = {};
  const add = (f: string, m: string) => ((errors[f] as string[] | undefined) ?? (errors[f] = [])).push(m);
  const attrs: ProjectAttributes = {};
  const safe = <T>(field: string, read: () => T): T | undefined => {
    try {
      return read();
    } catch (e) {
      if (e instanceof InvalidAttribute) add(field, 'is invalid');
      else throw e;
      return undefined;
    }
  };

  let name = safe('name', () => p.string('name'))?.trim();
  let path = safe('path', () => p.string('path'))?.trim();
  if (mode === 'create') {
    if (name === undefined || name === '') {
      if (!path) p.requireString('name');
      name = path;
    }
    if (path === undefined || path === '') path = parameterize(name as string);
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
  const description = safe('description', () => p.string('description'));
  if (description !== undefined) {
    if (description.length > 65535) add('description', 'is too long (maximum is 65535 characters)');
    attrs.description = description;
  }
  for (const [field, key] of FLAGS) {
    const v = safe(field, () => p.bool(field));
    if (v !== undefined) (attrs as Record<string, unknown>)[key] = v;
  }
  const level = safe('visibility_level', () => p.int('visibility_level'));
  if (level !== undefined) {
    const mapped = visibilityLevel(level);
    if (mapped === undefined) add('visibility_level', 'is not included in the list');
    else attrs.visibilityLevel = mapped;
  } else {
    const pub = safe('public', () => p.bool('public'));
    if (pub !== undefined) attrs.visibilityLevel = pub ? 20 : 0;
  }
  if (mode === 'update') {
    const branch = safe('default_branch', () => p.string('default_branch'))?.trim();
    if (branch) attrs.defaultBranch = branch;
  } else {
    const ns = safe('namespace_id', () => p.int('namespace_id'));
    if (ns !== undefined) attrs.namespaceId = ns;
    const importUrl = safe('import_url', () => p.string('import_url'))?.trim();
    if (importUrl) {
      if (importUrl.length > 2048) add('import_url', 'is too long (maximum is 2048 characters)');
      attrs.importUrl = importUrl;
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return attrs;
}
