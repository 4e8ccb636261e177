import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A job's environment name and coverage regex come from `.gitlab-ci.yml`, whose grammar bounds them
 * by its own rules (a coverage regexp of up to 256 characters, an environment name by its pattern),
 * not by 255: as text columns, a file the grammar accepts never fails its pipeline's insert.
 */
export class CiBuildsJobTexts1734400200000 implements MigrationInterface {
  name = 'CiBuildsJobTexts1734400200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ci_builds ALTER COLUMN environment TYPE text, ALTER COLUMN coverage_regex TYPE text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ci_builds ALTER COLUMN environment TYPE varchar(255), ALTER COLUMN coverage_regex TYPE varchar(255)`);
  }
}
