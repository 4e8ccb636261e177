import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface MembershipRow {
  kind: 'p' | 'g';
  /** The project id (kind p) or the group's namespace id (kind g). */
  id: number;
  access_level: number;
  notification_level: number;
}

/** The policy's queries: a user's memberships in projects and groups. */
@Injectable()
export class PolicyRepository {
  constructor(private readonly ds: DataSource) {}

  /** Direct project memberships and group memberships of `userId`: one round trip for both kinds. */
  memberships(userId: number, projectIds: number[], namespaceIds: number[]): Promise<MembershipRow[]> {
    return this.ds.query(
      `SELECT 'p' AS kind, project_id AS id, access_level, notification_level FROM project_members
        WHERE user_id = $1 AND project_id = ANY($2)
       UNION ALL
       SELECT 'g' AS kind, namespace_id AS id, access_level, notification_level FROM group_members
        WHERE user_id = $1 AND namespace_id = ANY($3)`,
      [userId, projectIds, namespaceIds],
    );
  }

  /** The user's level in a group (0 for none). */
  async groupLevel(userId: number, groupId: number): Promise<number> {
    const rows: { access_level: number }[] = await this.ds.query(`SELECT access_level FROM group_members WHERE user_id = $1 AND namespace_id = $2`, [
      userId,
      groupId,
    ]);
    return rows[0]?.access_level ?? 0;
  }
}
