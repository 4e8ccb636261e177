/**
 * The GitLab version whose API this server speaks: `GET /version` reports it, and builds see it as
 * `CI_SERVER_VERSION` / `CI_SERVER_REVISION` (GitLab's `Gitlab::VERSION` and `Gitlab::REVISION`).
 */
export const VERSION = { version: '8.8.0', revision: process.env.GIT_REVISION || 'unknown' };
