import { AccessLevel, NO_ACCESS, PolicyProject, projectAbilities } from '../common/policy/policy';
import { eventVisibility } from './event-policy';

const project: PolicyProject = {
  visibilityLevel: 20,
  archived: false,
  issuesEnabled: true,
  mergeRequestsEnabled: true,
  wikiEnabled: true,
  snippetsEnabled: true,
  buildsEnabled: true,
  containerRegistryEnabled: false,
  publicBuilds: true,
};
const user = { id: 7, admin: false, external: false };

describe('eventVisibility', () => {
  it('a non-member of a public project reads issues but not confidential ones, and only public/internal snippets', () => {
    const v = eventVisibility(user, projectAbilities(user, project, NO_ACCESS), NO_ACCESS);
    expect(v).toMatchObject({ viewerId: 7, readIssue: true, allConfidential: false, allSnippets: false, snippetLevels: [10, 20] });
  });

  it('reporters and up and administrators see confidential issues (8.12+); members from guest up every snippet', () => {
    const guest = { ...NO_ACCESS, level: AccessLevel.GUEST };
    expect(eventVisibility(user, projectAbilities(user, project, guest), guest)).toMatchObject({ allConfidential: false, allSnippets: true });
    const reporter = { ...NO_ACCESS, level: AccessLevel.REPORTER };
    expect(eventVisibility(user, projectAbilities(user, project, reporter), reporter)).toMatchObject({ allConfidential: true, allSnippets: true });
    const admin = { ...user, admin: true };
    expect(eventVisibility(admin, projectAbilities(admin, project, NO_ACCESS), NO_ACCESS).allConfidential).toBe(true);
  });

  it('external users see public snippets only; disabled issues hide issue events', () => {
    const external = { ...user, external: true };
    expect(eventVisibility(external, projectAbilities(external, project, NO_ACCESS), NO_ACCESS).snippetLevels).toEqual([20]);
    const noIssues = { ...project, issuesEnabled: false };
    expect(eventVisibility(user, projectAbilities(user, noIssues, NO_ACCESS), NO_ACCESS).readIssue).toBe(false);
  });
});
