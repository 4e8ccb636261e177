import type { BuildRow } from '../builds/builds.service';
import type { BuildArtifactsFileResponse } from '../builds/builds.responses';
import { BuildDetailsResponse, RunnerBuildResponse, RunnerRegistrationResponse } from './runner-api.responses';

/** `repo_url`: the project's HTTP clone URL with `gitlab-ci-token:<build token>@` after the scheme. */
export function repoUrl(externalUrl: string, projectPath: string, token: string): string {
  const u = new URL(`${externalUrl}/${projectPath}.git`);
  u.username = 'gitlab-ci-token';
  u.password = token;
  return u.toString();
}

function artifactsFile(b: BuildRow): { artifacts_file?: BuildArtifactsFileResponse } {
  return b.artifactsFile ? { artifacts_file: { filename: b.artifactsFile, size: Number(b.artifactsSize ?? 0) } } : {};
}

/** The short `Build` entity of the runner API (each entry of `depends_on_builds`). */
export function presentRunnerBuild(b: BuildRow, token: string | undefined): RunnerBuildResponse {
  return {
    id: b.id,
    ref: b.ref,
    tag: b.tag,
    sha: b.sha,
    status: b.status,
    name: b.name,
    token: token ?? '',
    stage: b.stage,
    project_id: b.projectId,
    project_name: b.projectName,
    ...artifactsFile(b),
  };
}

export interface BuildPayloadExtras {
  token: string;
  externalUrl: string;
  variables: { key: string; value: string; public: boolean }[];
  dependencies: { build: BuildRow; token: string | undefined }[];
}

/** `BuildDetails`: what `builds/register` answers (runner-protocol §2.4, GitLab 8.8's key order). */
export function presentBuildDetails(b: BuildRow, x: BuildPayloadExtras): BuildDetailsResponse {
  return {
    id: b.id,
    ref: b.ref,
    tag: b.tag,
    sha: b.sha,
    status: b.status,
    name: b.name,
    token: x.token,
    stage: b.stage,
    project_id: b.projectId,
    project_name: b.projectName,
    ...artifactsFile(b),
    commands: b.commands,
    repo_url: repoUrl(x.externalUrl, b.projectPath, x.token),
    before_sha: b.beforeSha ?? '0000000000000000000000000000000000000000',
    allow_git_fetch: b.allowGitFetch,
    options: b.options ?? {},
    timeout: b.buildTimeout,
    variables: x.variables,
    depends_on_builds: x.dependencies.map((d) => presentRunnerBuild(d.build, d.token)),
  };
}

/** `runners/register`: exactly `{id, token}`. */
export function presentRegisteredRunner(id: number, token: string): RunnerRegistrationResponse {
  return { id, token };
}
