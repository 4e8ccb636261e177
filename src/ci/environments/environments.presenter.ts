import type { ProjectResponse } from '../../projects/projects.responses';
import { PresentContext, presentUserBasic } from '../../users/users.presenter';
import { BuildView, presentBuild } from '../builds/builds.presenter';
import type { DeploymentRow, EnvironmentRow } from './environments.repository';
import { DeploymentResponse, EnvironmentBasicResponse, EnvironmentResponse } from './environments.responses';

/** GitLab 8.17's `EnvironmentBasic`: id, name, slug, external_url. */
export function presentEnvironmentBasic(e: Pick<EnvironmentRow, 'id' | 'name' | 'slug' | 'externalUrl'>): EnvironmentBasicResponse {
  return { id: e.id, name: e.name, slug: e.slug, external_url: e.externalUrl };
}

/** GitLab 8.17's `Environment`: EnvironmentBasic and its project. */
export function presentEnvironment(e: EnvironmentRow, project: ProjectResponse): EnvironmentResponse {
  return { ...presentEnvironmentBasic(e), project };
}

/** A deployment with what it shows: its user and its build as the builds API shows them. */
export interface DeploymentView {
  deployment: DeploymentRow;
  build?: BuildView;
}

/** GitLab 8.17's `Deployment`: id, iid, ref, sha, created_at, user, environment, deployable. */
export function presentDeployment(v: DeploymentView, ctx: PresentContext): DeploymentResponse {
  const d = v.deployment;
  return {
    id: d.id,
    iid: d.iid,
    ref: d.ref,
    sha: d.sha,
    created_at: new Date(d.createdAt).toISOString(),
    user: d.user ? presentUserBasic({ ...d.user, createdAt: new Date(d.user.createdAt) }, ctx) : null,
    environment: presentEnvironmentBasic(d.environment),
    deployable: v.build ? presentBuild(v.build, ctx) : null,
  };
}
