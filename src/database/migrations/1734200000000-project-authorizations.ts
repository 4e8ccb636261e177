import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: `project_authorizations`, one row per (user, project) the user is a member of — as
 * GitLab's table of that name: the highest of the user's direct project membership, its membership
 * of the project's group, and owner (50) of the project in its personal namespace. Project lists,
 * search and the visibility of projects read it instead of ORing three membership subqueries over
 * every project.
 *
 * It is derived data, kept exact by triggers in the writing transaction itself (no cache, nothing
 * to invalidate, whichever instance or hand-written SQL makes the change): a change to
 * project_members, group_members, a project's creation or transfer (namespace_id), a namespace's
 * owner or kind recomputes the pairs it touches; deleting a project or a user cascades. Blocked
 * users keep their rows (authentication denies them). Every recomputation takes one transaction
 * advisory lock first, so two concurrent changes (a member added to a group while a project is
 * created in it) cannot each miss the other's uncommitted row: the second waits for the first to
 * commit, and its statements (READ COMMITTED, VOLATILE functions) then read the committed rows. The
 * lock is taken before the sets to recompute are read (the projects of a group, the members of a
 * project), so neither set misses the other transaction's row.
 */
export class ProjectAuthorizations1734200000000 implements MigrationInterface {
  name = 'ProjectAuthorizations1734200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_authorizations (
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        access_level integer NOT NULL,
        PRIMARY KEY (user_id, project_id)
      )`);
    await q.query(`CREATE INDEX project_authorizations_project_idx ON project_authorizations (project_id)`);

    // Recomputes every pair of `uids` × `pids` from the memberships (rows of users or projects being
    // deleted are left to the cascades).
    await q.query(`
      CREATE FUNCTION refresh_project_authorizations(uids integer[], pids integer[]) RETURNS void
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF cardinality(uids) = 0 OR cardinality(pids) = 0 THEN RETURN; END IF;
        PERFORM pg_advisory_xact_lock(hashtext('project_authorizations'));
        DELETE FROM project_authorizations WHERE user_id = ANY(uids) AND project_id = ANY(pids);
        INSERT INTO project_authorizations (user_id, project_id, access_level)
        SELECT s.user_id, s.project_id, max(s.level)
          FROM (SELECT pm.user_id, pm.project_id, pm.access_level AS level FROM project_members pm
                 WHERE pm.user_id = ANY(uids) AND pm.project_id = ANY(pids)
                UNION ALL
                SELECT gm.user_id, p.id, gm.access_level FROM group_members gm JOIN projects p ON p.namespace_id = gm.namespace_id
                 WHERE gm.user_id = ANY(uids) AND p.id = ANY(pids)
                UNION ALL
                SELECT n.owner_id, p.id, 50 FROM projects p JOIN namespaces n ON n.id = p.namespace_id AND n.kind = 'user'
                 WHERE n.owner_id = ANY(uids) AND p.id = ANY(pids)) s
         WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id) AND EXISTS (SELECT 1 FROM projects p WHERE p.id = s.project_id)
         GROUP BY s.user_id, s.project_id;
      END $$`);

    // Every user who may hold a row for project `pid` (members, its group's members, its namespace's owner, current rows).
    await q.query(`
      CREATE FUNCTION refresh_project_authorizations_of_project(pid integer) RETURNS void
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM refresh_project_authorizations(ARRAY(
          SELECT user_id FROM project_members WHERE project_id = pid
          UNION SELECT gm.user_id FROM group_members gm JOIN projects p ON p.namespace_id = gm.namespace_id WHERE p.id = pid
          UNION SELECT n.owner_id FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = pid AND n.owner_id IS NOT NULL
          UNION SELECT user_id FROM project_authorizations WHERE project_id = pid), ARRAY[pid]);
      END $$`);

    await q.query(`
      CREATE FUNCTION project_members_authorizations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('project_authorizations'));
        IF TG_OP <> 'INSERT' THEN PERFORM refresh_project_authorizations(ARRAY[OLD.user_id], ARRAY[OLD.project_id]); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM refresh_project_authorizations(ARRAY[NEW.user_id], ARRAY[NEW.project_id]); END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER project_members_authorizations AFTER INSERT OR DELETE OR UPDATE OF user_id, project_id, access_level
        ON project_members FOR EACH ROW EXECUTE FUNCTION project_members_authorizations()`);

    await q.query(`
      CREATE FUNCTION group_members_authorizations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('project_authorizations'));
        IF TG_OP <> 'INSERT' THEN
          PERFORM refresh_project_authorizations(ARRAY[OLD.user_id], ARRAY(SELECT id FROM projects WHERE namespace_id = OLD.namespace_id));
        END IF;
        IF TG_OP <> 'DELETE' THEN
          PERFORM refresh_project_authorizations(ARRAY[NEW.user_id], ARRAY(SELECT id FROM projects WHERE namespace_id = NEW.namespace_id));
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER group_members_authorizations AFTER INSERT OR DELETE OR UPDATE OF user_id, namespace_id, access_level
        ON group_members FOR EACH ROW EXECUTE FUNCTION group_members_authorizations()`);

    await q.query(`
      CREATE FUNCTION projects_authorizations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('project_authorizations'));
        PERFORM refresh_project_authorizations_of_project(NEW.id);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER projects_authorizations AFTER INSERT OR UPDATE OF namespace_id
        ON projects FOR EACH ROW EXECUTE FUNCTION projects_authorizations()`);

    await q.query(`
      CREATE FUNCTION namespaces_authorizations() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('project_authorizations'));
        PERFORM refresh_project_authorizations(ARRAY_REMOVE(ARRAY[OLD.owner_id, NEW.owner_id], NULL),
                                               ARRAY(SELECT id FROM projects WHERE namespace_id = NEW.id));
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER namespaces_authorizations AFTER UPDATE OF owner_id, kind
        ON namespaces FOR EACH ROW EXECUTE FUNCTION namespaces_authorizations()`);

    // Backfill.
    await q.query(`
      INSERT INTO project_authorizations (user_id, project_id, access_level)
      SELECT user_id, project_id, max(level)
        FROM (SELECT user_id, project_id, access_level AS level FROM project_members
              UNION ALL
              SELECT gm.user_id, p.id, gm.access_level FROM group_members gm JOIN projects p ON p.namespace_id = gm.namespace_id
              UNION ALL
              SELECT n.owner_id, p.id, 50 FROM projects p JOIN namespaces n ON n.id = p.namespace_id
               WHERE n.kind = 'user' AND n.owner_id IS NOT NULL) s
       GROUP BY user_id, project_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS namespaces_authorizations ON namespaces`);
    await q.query(`DROP TRIGGER IF EXISTS projects_authorizations ON projects`);
    await q.query(`DROP TRIGGER IF EXISTS group_members_authorizations ON group_members`);
    await q.query(`DROP TRIGGER IF EXISTS project_members_authorizations ON project_members`);
    await q.query(`DROP FUNCTION IF EXISTS namespaces_authorizations()`);
    await q.query(`DROP FUNCTION IF EXISTS projects_authorizations()`);
    await q.query(`DROP FUNCTION IF EXISTS group_members_authorizations()`);
    await q.query(`DROP FUNCTION IF EXISTS project_members_authorizations()`);
    await q.query(`DROP FUNCTION IF EXISTS refresh_project_authorizations_of_project(integer)`);
    await q.query(`DROP FUNCTION IF EXISTS refresh_project_authorizations(integer[], integer[])`);
    await q.query(`DROP TABLE IF EXISTS project_authorizations`);
  }
}
