import type { GitSshService } from '../git/ssh-transport';

/** A git command an SSH client asked to run, parsed without a shell. */
export interface GitSshCommand {
  service: GitSshService;
  /** `namespace/project`, without a leading `/` or `~` and without `.git`. */
  path: string;
}

const SERVICES: Record<string, GitSshService> = {
  'upload-pack': 'git-upload-pack',
  'receive-pack': 'git-receive-pack',
  'upload-archive': 'git-upload-archive',
};

const SEGMENT = '[A-Za-z0-9_][A-Za-z0-9_.-]*';
const PATH = new RegExp(`^${SEGMENT}(/${SEGMENT})+$`);

/**
 * Parses what git sends as the SSH command (`git-upload-pack 'ns/project.git'`): the three git services
 * (also in the `git upload-pack` form), with a quoted or unquoted path, with or without a leading `/` or
 * `~/`, `.git` optional. Anything else — a shell, another command, a second argument, shell syntax —
 * is undefined: the caller refuses it. Nothing here ever reaches a shell; the path only names a project.
 */
export function parseGitSshCommand(command: string): GitSshCommand | undefined {
  if (command.length > 1024) return undefined;
  const m = /^git[- ](upload-pack|receive-pack|upload-archive) +(.+?) *$/.exec(command);
  if (!m) return undefined;
  let arg = m[2];
  const quoted = /^'([^']*)'$/.exec(arg) ?? /^"([^"\\$`]*)"$/.exec(arg);
  if (quoted) arg = quoted[1];
  arg = arg
    .replace(/^~\//, '')
    .replace(/^~/, '')
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '');
  if (!PATH.test(arg) || arg.split('/').some((s) => s === '.' || s === '..' || s.endsWith('.'))) return undefined;
  return { service: SERVICES[m[1]], path: arg };
}

/** `git-lfs-authenticate <path> download|upload`: what git-lfs runs over SSH for its HTTP credentials. */
export interface LfsAuthenticateCommand {
  /** `namespace/project`, as in a git command. */
  path: string;
  operation: 'download' | 'upload';
}

/**
 * Parses `git-lfs-authenticate 'ns/project.git' download` (gitlab-shell's GIT_LFS_AUTHENTICATE command:
 * a path as git's, then the operation); undefined for anything else. No shell is involved.
 */
export function parseLfsAuthenticateCommand(command: string): LfsAuthenticateCommand | undefined {
  if (command.length > 1024) return undefined;
  const m = /^git-lfs-authenticate +(\S+) +(download|upload) *$/.exec(command);
  if (!m) return undefined;
  const asGit = parseGitSshCommand(`git-upload-pack ${m[1]}`);
  return asGit && { path: asGit.path, operation: m[2] as 'download' | 'upload' };
}
