import { LicenseTemplate } from './licenses.service';
import { LicenseResponse } from './licenses.responses';

/** GitLab's RepoLicense entity, with both `featured` (spec) and `popular` (GitLab 8.8). */
export function presentLicense(l: LicenseTemplate): LicenseResponse {
  return {
    key: l.key,
    name: l.name,
    nickname: l.nickname,
    featured: l.featured,
    popular: l.featured,
    html_url: l.htmlUrl,
    source_url: l.sourceUrl,
    description: l.description,
    conditions: l.conditions,
    permissions: l.permissions,
    limitations: l.limitations,
    content: l.content,
  };
}
