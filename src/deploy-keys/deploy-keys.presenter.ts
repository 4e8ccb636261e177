import type { DeployKeyRow } from './deploy-keys.service';
import type { DeployKeysProject } from './deploy-keys-project.entity';
import { DeployKeyResponse, DeployKeysProjectResponse } from './deploy-keys.responses';

/** v3's `SSHKey` entity of a deploy key, in its key order. */
export function presentDeployKey(k: DeployKeyRow): DeployKeyResponse {
  return { id: k.id, title: k.title, key: k.key, created_at: k.createdAt, can_push: k.canPush };
}

/** The removed `deploy_keys_projects` row, as v3's DELETE answered it. */
export function presentDeployKeysProject(l: DeployKeysProject): DeployKeysProjectResponse {
  return { id: l.id, deploy_key_id: l.deployKeyId, project_id: l.projectId, created_at: l.createdAt, updated_at: l.updatedAt };
}
