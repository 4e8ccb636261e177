import { MigrationInterface, QueryRunner } from 'typeorm';

/** Frozen SQL: users, namespaces, identities, SSH keys, emails, OAuth tokens, application settings. */
export class UsersAndSettings1732233600000 implements MigrationInterface {
  name = 'UsersAndSettings1732233600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id serial PRIMARY KEY,
        username varchar(255) NOT NULL,
        email varchar(255) NOT NULL,
        name varchar(255) NOT NULL,
        encrypted_password varchar(255) NOT NULL,
        state varchar(20) NOT NULL DEFAULT 'active',
        admin boolean NOT NULL DEFAULT false,
        projects_limit integer NOT NULL DEFAULT 10,
        can_create_group boolean NOT NULL DEFAULT true,
        external boolean NOT NULL DEFAULT false,
        bio varchar(255),
        location varchar(255),
        skype varchar(255) NOT NULL DEFAULT '',
        linkedin varchar(255) NOT NULL DEFAULT '',
        twitter varchar(255) NOT NULL DEFAULT '',
        website_url varchar(255) NOT NULL DEFAULT '',
        theme_id integer NOT NULL DEFAULT 2,
        color_scheme_id integer NOT NULL DEFAULT 1,
        two_factor_enabled boolean NOT NULL DEFAULT false,
        confirmed_at timestamptz,
        last_sign_in_at timestamptz,
        current_sign_in_at timestamptz,
        sign_in_count integer NOT NULL DEFAULT 0,
        private_token_digest char(64) NOT NULL,
        private_token_encrypted text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_state_check CHECK (state IN ('active', 'blocked', 'ldap_blocked')),
        CONSTRAINT users_projects_limit_check CHECK (projects_limit >= 0)
      )`);
    await q.query(`CREATE UNIQUE INDEX users_username_key ON users (lower(username))`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`);
    await q.query(`CREATE UNIQUE INDEX users_private_token_digest_key ON users (private_token_digest)`);
    await q.query(`CREATE INDEX users_name_idx ON users (lower(name))`);

    await q.query(`
      CREATE TABLE namespaces (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        path varchar(255) NOT NULL,
        kind varchar(10) NOT NULL,
        owner_id integer REFERENCES users(id) ON DELETE CASCADE,
        description text NOT NULL DEFAULT '',
        visibility_level integer NOT NULL DEFAULT 20,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT namespaces_kind_check CHECK (kind IN ('user', 'group'))
      )`);
    await q.query(`CREATE UNIQUE INDEX namespaces_path_key ON namespaces (lower(path))`);
    await q.query(`CREATE UNIQUE INDEX namespaces_user_owner_key ON namespaces (owner_id) WHERE kind = 'user'`);

    await q.query(`
      CREATE TABLE identities (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        provider varchar(255) NOT NULL,
        extern_uid varchar(255) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX identities_user_provider_key ON identities (user_id, provider)`);
    await q.query(`CREATE UNIQUE INDEX identities_provider_uid_key ON identities (provider, extern_uid)`);

    await q.query(`
      CREATE TABLE keys (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        key text NOT NULL,
        fingerprint varchar(128) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX keys_fingerprint_key ON keys (fingerprint)`);
    await q.query(`CREATE INDEX keys_user_id_idx ON keys (user_id)`);

    await q.query(`
      CREATE TABLE emails (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        email varchar(255) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX emails_email_key ON emails (lower(email))`);
    await q.query(`CREATE INDEX emails_user_id_idx ON emails (user_id)`);

    await q.query(`
      CREATE TABLE oauth_access_tokens (
        id serial PRIMARY KEY,
        resource_owner_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_digest char(64) NOT NULL,
        refresh_token_digest char(64),
        scopes varchar(255) NOT NULL DEFAULT 'api',
        expires_in integer,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX oauth_access_tokens_token_key ON oauth_access_tokens (token_digest)`);
    await q.query(`CREATE UNIQUE INDEX oauth_access_tokens_refresh_key ON oauth_access_tokens (refresh_token_digest)`);

    await q.query(`
      CREATE TABLE application_settings (
        id serial PRIMARY KEY,
        default_projects_limit integer NOT NULL DEFAULT 10,
        signup_enabled boolean NOT NULL DEFAULT true,
        signin_enabled boolean NOT NULL DEFAULT true,
        gravatar_enabled boolean NOT NULL DEFAULT true,
        sign_in_text text,
        home_page_url varchar(255),
        default_branch_protection integer NOT NULL DEFAULT 1,
        restricted_visibility_levels integer[],
        max_attachment_size integer NOT NULL DEFAULT 10,
        session_expire_delay integer NOT NULL DEFAULT 10080,
        default_project_visibility integer NOT NULL DEFAULT 0,
        default_snippet_visibility integer NOT NULL DEFAULT 0,
        default_group_visibility integer NOT NULL DEFAULT 0,
        restricted_signup_domains text[],
        user_oauth_applications boolean NOT NULL DEFAULT true,
        after_sign_out_path varchar(255),
        container_registry_token_expire_delay integer NOT NULL DEFAULT 5,
        allow_local_requests_from_hooks_and_services boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO application_settings DEFAULT VALUES`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['application_settings', 'oauth_access_tokens', 'emails', 'keys', 'identities', 'namespaces', 'users']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
