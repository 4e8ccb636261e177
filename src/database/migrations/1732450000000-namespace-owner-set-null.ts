import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: deleting a user must not delete the groups it created (their projects would block the
 * delete). `namespaces.owner_id` becomes SET NULL; the user's personal namespace is removed explicitly.
 */
export class NamespaceOwnerSetNull1732450000000 implements MigrationInterface {
  name = 'NamespaceOwnerSetNull1732450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE namespaces DROP CONSTRAINT namespaces_owner_id_fkey`);
    await q.query(`ALTER TABLE namespaces ADD CONSTRAINT namespaces_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE namespaces DROP CONSTRAINT namespaces_owner_id_fkey`);
    await q.query(`ALTER TABLE namespaces ADD CONSTRAINT namespaces_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE CASCADE`);
  }
}
