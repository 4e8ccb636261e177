import { ApplicationSettings } from './application-settings.entity';
import { ApplicationSettingsResponse } from './application-settings.responses';

/** GitLab 8.8's settings keys, plus the spec's names (`avatar_enabled`, `container_registry_...`) and `domain_whitelist`. */
/** The settings' own fields; the areas' additions (`runners_registration_token`) follow (adminFields). */
export function presentSettings(s: ApplicationSettings): Omit<ApplicationSettingsResponse, 'runners_registration_token'> {
  return {
    id: s.id,
    default_projects_limit: s.defaultProjectsLimit,
    signup_enabled: s.signupEnabled,
    signin_enabled: s.signinEnabled,
    gravatar_enabled: s.gravatarEnabled,
    avatar_enabled: s.gravatarEnabled,
    sign_in_text: s.signInText,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    home_page_url: s.homePageUrl,
    default_branch_protection: s.defaultBranchProtection,
    restricted_visibility_levels: s.restrictedVisibilityLevels,
    max_attachment_size: s.maxAttachmentSize,
    session_expire_delay: s.sessionExpireDelay,
    default_project_visibility: s.defaultProjectVisibility,
    default_snippet_visibility: s.defaultSnippetVisibility,
    default_group_visibility: s.defaultGroupVisibility,
    restricted_signup_domains: s.restrictedSignupDomains,
    domain_whitelist: s.restrictedSignupDomains,
    user_oauth_applications: s.userOauthApplications,
    after_sign_out_path: s.afterSignOutPath,
    container_registry_token_expire_delay: s.containerRegistryTokenExpireDelay,
    allow_local_requests_from_hooks_and_services: s.allowLocalRequestsFromHooksAndServices,
    shared_runners_enabled: s.sharedRunnersEnabled,
    max_artifacts_size: s.maxArtifactsSize,
    max_pages_size: s.maxPagesSize,
  };
}
