import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: GitLab 8.17's `max_pages_size` application setting (MB, default 100): the largest
 * `public/` folder a `pages` build may publish (the total of its files, unpacked).
 */
export class PagesSettings1734403000000 implements MigrationInterface {
  name = 'PagesSettings1734403000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE application_settings ADD COLUMN max_pages_size integer NOT NULL DEFAULT 100`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE application_settings DROP COLUMN max_pages_size`);
  }
}
