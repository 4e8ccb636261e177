import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: GitLab 8.12's notification settings. One row per user and source: the global one
 * (`source_type` 'global', `source_id` 0, which also holds `notification_email`), a project's
 * ('Project') or a group's ('Namespace'). `level`: disabled 0, participating 1, watch 2, global 3,
 * mention 4, custom 5; `events`: the custom level's switches. The members' own `notification_level`
 * column is no longer read: a project's `permissions` show the level stored here (3 when none).
 */
export class NotificationSettings1734100000000 implements MigrationInterface {
  name = 'NotificationSettings1734100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_settings (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        source_type varchar(16) NOT NULL,
        source_id integer NOT NULL DEFAULT 0,
        level smallint NOT NULL,
        events jsonb NOT NULL DEFAULT '{}',
        notification_email varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT notification_settings_user_source_key UNIQUE (user_id, source_type, source_id)
      )`);
    await q.query(`CREATE INDEX notification_settings_source_idx ON notification_settings (source_type, source_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS notification_settings`);
  }
}
