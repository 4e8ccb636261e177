import { ApplicationSettings } from '../application-settings/application-settings.entity';
import { Event } from '../events/event.entity';
import { GroupMember, ProjectMember } from '../members/member.entities';
import { Namespace } from '../namespaces/namespace.entity';
import { OauthAccessToken } from '../oauth/oauth-access-token.entity';
import { Project } from '../projects/project.entity';
import { CommitComment, CommitStatus, ProtectedBranch, Release } from '../repository/repository.entities';
import { ProjectStar } from '../projects/project-star.entity';
import { Email } from '../users/email.entity';
import { Identity } from '../users/identity.entity';
import { SshKey } from '../users/key.entity';
import { User } from '../users/user.entity';
import { Issue } from '../issues/issue.entity';
import { Label, LabelLink } from '../labels/label.entity';
import { Milestone } from '../milestones/milestone.entity';
import { Note } from '../notes/note.entity';
import { Snippet } from '../snippets/snippet.entity';
import { Subscription } from '../subscriptions/subscription.entity';

/** Every entity the data source maps. */
export const ENTITIES = [
  User, Identity, SshKey, Email, Namespace, OauthAccessToken, ApplicationSettings,
  Project, ProjectMember, GroupMember, ProjectStar, Event,
  ProtectedBranch, Release, CommitComment, CommitStatus,
  Issue, Milestone, Label, LabelLink, Note, Snippet, Subscription,
];
