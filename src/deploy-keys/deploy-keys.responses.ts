import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';
import { SSHKeyResponse } from '../users/users.responses';

@ResponseEntity('DeployKey', "A deploy key (GitLab 8.17's SSHKey entity: id, title, key, created_at, can_push).")
export class DeployKeyResponse extends SSHKeyResponse {
  @ApiProperty({ type: Boolean, description: 'Whether the key may push (to the branches the protection rules leave to developers).' })
  can_push!: boolean;
}

@ResponseEntity('DeployKeysProject', 'A deploy key disabled on a project by DELETE /projects/:id/deploy_keys/:key_id (the removed link, as v3 answered).')
export class DeployKeysProjectResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  deploy_key_id!: number;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;
}
