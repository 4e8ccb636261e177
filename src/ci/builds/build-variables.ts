import { VERSION } from '../../config/version';
import type { BuildRow } from './builds.repository';

export interface BuildVariable {
  key: string;
  value: string;
  public: boolean;
}

/** The runner that took a build, as its CI_RUNNER_* variables name it. */
export interface VariablesRunner {
  id: number;
  description: string | null;
  tagList: string[] | null;
}

/**
 * Variables a later area adds to the ones a runner receives, after all of 8.17's simple variables:
 * where the environments area puts `CI_ENVIRONMENT_NAME` / `CI_ENVIRONMENT_SLUG` (8.17's
 * `persisted_environment.predefined_variables`). Registered with `BuildsService.addVariablesSource`.
 */
export type BuildVariablesSource = (build: BuildRow) => Promise<BuildVariable[]>;

/** GitLab 8.17's `Ci::Build#ref_slug`: the ref lowercased, every character but `a-z0-9` a `-`, at most 63 characters. */
export function refSlug(ref: string): string {
  return ref
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '-')
    .slice(0, 63);
}

const ZERO_SHA = '0'.repeat(40);
const pub = (key: string, value: string): BuildVariable => ({ key, value, public: true });

/**
 * GitLab 8.17's `Ci::Build#predefined_variables`, then `Project#predefined_variables`,
 * `Ci::Pipeline#predefined_variables` and `Ci::Runner#predefined_variables` (doc/ci/variables/README.md),
 * in that order. The project's namespace is one path segment (8.17 had no subgroups).
 */
export function predefinedVariables(
  build: BuildRow,
  ctx: { token: string | undefined; externalUrl: string; runner?: VariablesRunner; user?: { id: number; email: string } },
): BuildVariable[] {
  const [namespace, projectPath] = [build.projectPath.slice(0, build.projectPath.indexOf('/')), build.projectPath.slice(build.projectPath.indexOf('/') + 1)];
  const vars: BuildVariable[] = [
    pub('CI', 'true'),
    pub('GITLAB_CI', 'true'),
    pub('CI_BUILD_ID', String(build.id)),
    ...(ctx.token ? [{ key: 'CI_BUILD_TOKEN', value: ctx.token, public: false }] : []),
    pub('CI_BUILD_REF', build.sha),
    pub('CI_BUILD_BEFORE_SHA', build.beforeSha ?? ZERO_SHA),
    pub('CI_BUILD_REF_NAME', build.ref),
    pub('CI_BUILD_REF_SLUG', refSlug(build.ref)),
    pub('CI_BUILD_NAME', build.name),
    pub('CI_BUILD_STAGE', build.stage),
    pub('CI_SERVER_NAME', 'GitLab'),
    pub('CI_SERVER_VERSION', VERSION.version),
    pub('CI_SERVER_REVISION', VERSION.revision),
  ];
  if (build.tag) vars.push(pub('CI_BUILD_TAG', build.ref));
  if (build.triggerRequestId !== null) vars.push(pub('CI_BUILD_TRIGGERED', 'true'));
  if (build.when === 'manual') vars.push(pub('CI_BUILD_MANUAL', 'true'));
  vars.push(
    pub('CI_PROJECT_ID', String(build.projectId)),
    pub('CI_PROJECT_NAME', projectPath),
    pub('CI_PROJECT_PATH', build.projectPath),
    pub('CI_PROJECT_NAMESPACE', namespace),
    pub('CI_PROJECT_URL', `${ctx.externalUrl}/${build.projectPath}`),
    pub('CI_PIPELINE_ID', String(build.pipelineId)),
  );
  if (ctx.runner) {
    vars.push(
      pub('CI_RUNNER_ID', String(ctx.runner.id)),
      pub('CI_RUNNER_DESCRIPTION', ctx.runner.description ?? ''),
      pub('CI_RUNNER_TAGS', (ctx.runner.tagList ?? []).join(', ')),
    );
  }
  return vars;
}

/** GitLab 8.17's `Ci::Build#user_variables`: who started the build. */
export function userVariables(user: { id: number; email: string } | undefined): BuildVariable[] {
  return user ? [pub('GITLAB_USER_ID', String(user.id)), pub('GITLAB_USER_EMAIL', user.email)] : [];
}
