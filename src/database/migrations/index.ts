import { UsersAndSettings1732233600000 } from './1732233600000-users-and-settings';
import { ProjectsGroupsMembersEvents1732320000000 } from './1732320000000-projects-groups-members-events';
import { Repository1732400000000 } from './1732400000000-repository';
import { NamespaceOwnerSetNull1732450000000 } from './1732450000000-namespace-owner-set-null';
import { IssuesMilestonesLabelsNotesSnippets1732500000000 } from './1732500000000-issues-milestones-labels-notes-snippets';
import { LoginAttempts1732550000000 } from './1732550000000-login-attempts';
import { MergeRequests1732600000000 } from './1732600000000-merge-requests';
import { Ci1732700000000 } from './1732700000000-ci';
import { WebHooks1732800000000 } from './1732800000000-web-hooks';
import { SharedRunnersSetting1733000000000 } from './1733000000000-shared-runners-setting';
import { RequestRateCounters1733600000000 } from './1733600000000-request-rate-counters';
import { AuthChangedNotify1733700000000 } from './1733700000000-auth-changed-notify';
import { ListIndexes1733700001000 } from './1733700001000-list-indexes';
import { CiArtifactsExpiry1733200000000 } from './1733200000000-ci-artifacts-expiry';
import { SearchTrigramIndexes1733800000000 } from './1733800000000-search-trigram-indexes';
import { RunnerChangedNotify1733900000000 } from './1733900000000-runner-changed-notify';
import { MergeWhenBuildSucceedsSha1734000003000 } from './1734000003000-merge-when-build-succeeds-sha';
import { NotificationSettings1734100000000 } from './1734100000000-notification-settings';
import { ProjectAuthorizations1734200000000 } from './1734200000000-project-authorizations';
import { ProjectsPageIndex1734200001000 } from './1734200001000-projects-page-index';
import { KeysAuthChangedNotify1734300500000 } from './1734300500000-keys-auth-changed-notify';
import { CiBuildsStates1734400000000 } from './1734400000000-ci-builds-8-17';
import { Environments1734401000000 } from './1734401000000-environments';
import { PagesSettings1734403000000 } from './1734403000000-pages-settings';
import { DeployKeys1734404000000 } from './1734404000000-deploy-keys';
import { ProtectedBranchesDevelopersCanMerge1734404100000 } from './1734404100000-protected-branches-developers-can-merge';
import { LfsObjects1734407000000 } from './1734407000000-lfs-objects';
import { CiPipelinesLegacyStages1734400100000 } from './1734400100000-ci-pipelines-legacy-stages';
import { CiBuildsJobTexts1734400200000 } from './1734400200000-ci-builds-job-texts';

/** Every migration, in order. A migration is frozen SQL and never imports entities. */
export const MIGRATIONS = [
  UsersAndSettings1732233600000,
  ProjectsGroupsMembersEvents1732320000000,
  Repository1732400000000,
  NamespaceOwnerSetNull1732450000000,
  IssuesMilestonesLabelsNotesSnippets1732500000000,
  LoginAttempts1732550000000,
  MergeRequests1732600000000,
  Ci1732700000000,
  WebHooks1732800000000,
  SharedRunnersSetting1733000000000,
  RequestRateCounters1733600000000,
  AuthChangedNotify1733700000000,
  ListIndexes1733700001000,
  CiArtifactsExpiry1733200000000,
  SearchTrigramIndexes1733800000000,
  RunnerChangedNotify1733900000000,
  MergeWhenBuildSucceedsSha1734000003000,
  NotificationSettings1734100000000,
  ProjectAuthorizations1734200000000,
  ProjectsPageIndex1734200001000,
  KeysAuthChangedNotify1734300500000,
  CiBuildsStates1734400000000,
  PagesSettings1734403000000,
  Environments1734401000000,
  DeployKeys1734404000000,
  CiPipelinesLegacyStages1734400100000,
  ProtectedBranchesDevelopersCanMerge1734404100000,
  CiBuildsJobTexts1734400200000,
  LfsObjects1734407000000,
];
