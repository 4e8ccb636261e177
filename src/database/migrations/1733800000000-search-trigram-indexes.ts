import { MigrationInterface, QueryRunner } from 'typeorm';

/** The trigram indexes, on the lower-cased columns the `search` filters match with LIKE '%term%'. */
const TRIGRAM_INDEXES: [name: string, on: string][] = [
  ['projects_name_trgm_idx', `projects USING gin (lower(name) gin_trgm_ops)`],
  ['projects_path_trgm_idx', `projects USING gin (lower(path) gin_trgm_ops)`],
  ['projects_description_trgm_idx', `projects USING gin (lower(coalesce(description, '')) gin_trgm_ops)`],
  ['namespaces_name_trgm_idx', `namespaces USING gin (lower(name) gin_trgm_ops)`],
  ['namespaces_path_trgm_idx', `namespaces USING gin (lower(path) gin_trgm_ops)`],
  ['users_username_trgm_idx', `users USING gin (lower(username) gin_trgm_ops)`],
  ['users_name_trgm_idx', `users USING gin (lower(name) gin_trgm_ops)`],
  ['users_email_trgm_idx', `users USING gin (lower(email) gin_trgm_ops)`],
];

/**
 * Frozen SQL: trigram (pg_trgm) GIN indexes serving the `search` filters — `GET /projects?search=`
 * (project name, path, description and namespace name), `GET /users?search=` and the member lists
 * (username, name, email), `GET /groups` and `GET /namespaces?search=` (namespace name and path) —
 * which match `lower(column) LIKE '%term%'`, something no B-tree serves.
 *
 * pg_trgm ships with PostgreSQL (contrib) and the embedded PGlite loads it (embedded-postgres.ts),
 * but creating an extension needs a privilege a production role may lack. Then the extension and
 * its indexes are skipped with a warning (inside a savepoint, so the migration and the start go on):
 * search still works, unindexed (the warning says how to add them later).
 */
export class SearchTrigramIndexes1733800000000 implements MigrationInterface {
  name = 'SearchTrigramIndexes1733800000000';

  async up(q: QueryRunner): Promise<void> {
    const savepoint = q.isTransactionActive;
    if (savepoint) await q.query('SAVEPOINT search_trigram_indexes');
    try {
      await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      // fastupdate off: rows go straight into the index. With GIN's default pending list, a bulk of new
      // rows (an import, the large seed) waits unsorted in up to 4 MB of pending pages that every search
      // reads whole until a vacuum merges them (100 ms per user search at 50,000 users); these tables
      // are written rarely, so the slower insert costs little
      for (const [name, on] of TRIGRAM_INDEXES) await q.query(`CREATE INDEX ${name} ON ${on} WITH (fastupdate = off)`);
      if (savepoint) await q.query('RELEASE SAVEPOINT search_trigram_indexes');
    } catch (e) {
      if (savepoint) await q.query('ROLLBACK TO SAVEPOINT search_trigram_indexes');
      process.stdout.write(
        JSON.stringify({
          time: new Date().toISOString(),
          level: 'warn',
          msg:
            'pg_trgm unavailable: the search filters stay unindexed (to index them: CREATE EXTENSION pg_trgm as a privileged role, ' +
            'then the CREATE INDEX statements of migration SearchTrigramIndexes1733800000000)',
          error: e instanceof Error ? e.message : String(e),
        }) + '\n',
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name] of TRIGRAM_INDEXES) await q.query(`DROP INDEX IF EXISTS ${name}`);
    // the extension stays: something else may use it
  }
}
