import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: per-project counters (iids), milestones, issues (soft-deleted), labels and their links,
 * notes (polymorphic on noteable_type/noteable_id), project snippets and subscriptions.
 */
export class IssuesMilestonesLabelsNotesSnippets1732500000000 implements MigrationInterface {
  name = 'IssuesMilestonesLabelsNotesSnippets1732500000000';

  async up(q: QueryRunner): Promise<void> {
    // one row per (project, usage); bumped with INSERT ... ON CONFLICT DO UPDATE ... RETURNING inside
    // the creating transaction, so concurrent creates queue on the row lock and never share an iid
    await q.query(`
      CREATE TABLE internal_ids (
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        usage varchar(40) NOT NULL,
        last_value integer NOT NULL,
        PRIMARY KEY (project_id, usage)
      )`);

    await q.query(`
      CREATE TABLE milestones (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        description text,
        state varchar(20) NOT NULL DEFAULT 'active',
        due_date date,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT milestones_state_check CHECK (state IN ('active', 'closed'))
      )`);
    await q.query(`CREATE UNIQUE INDEX milestones_project_iid_key ON milestones (project_id, iid)`);
    await q.query(`CREATE UNIQUE INDEX milestones_project_title_key ON milestones (project_id, title)`);

    await q.query(`
      CREATE TABLE issues (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        description text,
        state varchar(20) NOT NULL DEFAULT 'opened',
        confidential boolean NOT NULL DEFAULT false,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        assignee_id integer REFERENCES users(id) ON DELETE SET NULL,
        milestone_id integer REFERENCES milestones(id) ON DELETE SET NULL,
        moved_to_id integer REFERENCES issues(id) ON DELETE SET NULL,
        position integer NOT NULL DEFAULT 0,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT issues_state_check CHECK (state IN ('opened', 'reopened', 'closed'))
      )`);
    await q.query(`CREATE UNIQUE INDEX issues_project_iid_key ON issues (project_id, iid)`);
    await q.query(`CREATE INDEX issues_project_live_idx ON issues (project_id, state) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX issues_author_idx ON issues (author_id) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX issues_assignee_idx ON issues (assignee_id)`);
    await q.query(`CREATE INDEX issues_milestone_idx ON issues (milestone_id)`);

    await q.query(`
      CREATE TABLE labels (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        color varchar(7) NOT NULL,
        description text,
        template boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX labels_project_title_key ON labels (project_id, lower(title))`);

    await q.query(`
      CREATE TABLE label_links (
        id serial PRIMARY KEY,
        label_id integer NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
        target_type varchar(40) NOT NULL,
        target_id integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX label_links_key ON label_links (label_id, target_type, target_id)`);
    await q.query(`CREATE INDEX label_links_target_idx ON label_links (target_type, target_id)`);

    await q.query(`
      CREATE TABLE notes (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        noteable_type varchar(40) NOT NULL,
        noteable_id integer NOT NULL,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        body text NOT NULL,
        system boolean NOT NULL DEFAULT false,
        attachment varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX notes_noteable_idx ON notes (noteable_type, noteable_id, id)`);
    await q.query(`CREATE INDEX notes_project_idx ON notes (project_id)`);

    await q.query(`
      CREATE TABLE snippets (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        title varchar(255) NOT NULL,
        file_name varchar(255) NOT NULL,
        content text NOT NULL,
        visibility_level integer NOT NULL DEFAULT 0,
        expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT snippets_visibility_check CHECK (visibility_level IN (0, 10, 20))
      )`);
    await q.query(`CREATE INDEX snippets_project_idx ON snippets (project_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE subscriptions (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        subscribable_type varchar(40) NOT NULL,
        subscribable_id integer NOT NULL,
        subscribed boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX subscriptions_key ON subscriptions (subscribable_type, subscribable_id, user_id)`);
    await q.query(`CREATE INDEX subscriptions_user_idx ON subscriptions (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['subscriptions', 'snippets', 'notes', 'label_links', 'labels', 'issues', 'milestones', 'internal_ids']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
