import { parseGitSshCommand, parseLfsAuthenticateCommand } from './ssh-command';

describe('parseGitSshCommand', () => {
  it.each([
    ["git-upload-pack 'root/demo.git'", 'git-upload-pack', 'root/demo'],
    ["git-upload-pack '/root/demo.git'", 'git-upload-pack', 'root/demo'],
    ["git-receive-pack '~/root/demo.git'", 'git-receive-pack', 'root/demo'],
    ['git-receive-pack root/demo', 'git-receive-pack', 'root/demo'],
    ['git upload-pack "/group/my.project.git"', 'git-upload-pack', 'group/my.project'],
    ["git-upload-archive 'a_b/c-d.git'", 'git-upload-archive', 'a_b/c-d'],
    ["git-upload-pack 'root/demo.git/'", 'git-upload-pack', 'root/demo'],
  ])('%s', (command, service, path) => {
    expect(parseGitSshCommand(command)).toEqual({ service, path });
  });

  it.each([
    '',
    'bash',
    'sh -c id',
    'git-upload-pack',
    "git-upload-pack 'root/demo.git'; id",
    "git-upload-pack 'root/demo.git' extra",
    "git-upload-pack '--upload-pack=touch /tmp/x'",
    "git-upload-pack '-c core.sshCommand=x/y'",
    "git-upload-pack '../etc/passwd'",
    "git-upload-pack 'root/../demo'",
    "git-upload-pack 'root/$(id)'",
    'git-upload-pack "root/`id`"',
    "git-upload-pack 'demo'",
    "git-lfs-authenticate 'root/demo' download",
    "git-upload-pack 'root/demo\nid'",
    "scp -t 'root/demo'",
  ])('refuses %j', (command) => {
    expect(parseGitSshCommand(command)).toBeUndefined();
  });
});

describe('parseLfsAuthenticateCommand', () => {
  it.each([
    ["git-lfs-authenticate 'root/demo.git' download", { path: 'root/demo', operation: 'download' }],
    ['git-lfs-authenticate root/demo upload', { path: 'root/demo', operation: 'upload' }],
    ["git-lfs-authenticate '/root/demo.git' upload", { path: 'root/demo', operation: 'upload' }],
  ])('parses %j', (command, expected) => {
    expect(parseLfsAuthenticateCommand(command)).toEqual(expected);
  });

  it.each([
    "git-lfs-authenticate 'root/demo' delete",
    "git-lfs-authenticate 'root/demo'",
    "git-lfs-authenticate 'root/../demo' download",
    "git-lfs-authenticate 'root/demo' download; id",
    "git-lfs-authenticate 'root/$(id)' download",
    "git-lfs-authenticate 'root/demo' download extra",
    "git-lfs-transfer 'root/demo' download",
  ])('refuses %j', (command) => {
    expect(parseLfsAuthenticateCommand(command)).toBeUndefined();
  });
});
