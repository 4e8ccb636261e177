import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pipelines still active when 8.17's processing arrived were made the 8.8 way: only the stages
 * reached so far have builds. They are marked, and the first build of theirs that ends creates the
 * rest from the file as `created` (GitLab 8.17's `ensure_created_builds!`, kept for the same reason).
 */
export class CiPipelinesLegacyStages1734400100000 implements MigrationInterface {
  name = 'CiPipelinesLegacyStages1734400100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ci_pipelines ADD COLUMN legacy_stages boolean NOT NULL DEFAULT false`);
    await q.query(`UPDATE ci_pipelines SET legacy_stages = true WHERE status IN ('pending', 'running') AND yaml_errors IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ci_pipelines DROP COLUMN legacy_stages`);
  }
}
