import { DynamicModule, Module } from '@nestjs/common';
import { ApplicationSettingsModule } from './application-settings/application-settings.module';
import { AppConfig } from './config/config';
import { AuthModule } from './auth/auth.module';
import { CoreModule } from './core.module';
import { Database } from './database/data-source';
import { HealthModule } from './health/health.module';
import { HomeModule } from './home/home.module';
import { MetricsModule } from './metrics/metrics.module';
import { LicensesModule } from './licenses/licenses.module';
import { NamespacesModule } from './namespaces/namespaces.module';
import { OauthModule } from './oauth/oauth.module';
import { UsersModule } from './users/users.module';
import { LdapModule } from './ldap/ldap.module';
import { PolicyModule } from './common/policy/policy.module';
import { DomainEventsModule } from './domain-events/domain-events.module';
import { EventsModule } from './events/events.module';
import { GitModule } from './git/git.module';
import { GroupsModule } from './groups/groups.module';
import { MembersModule } from './members/members.module';
import { ProjectsModule } from './projects/projects.module';
import { RepositoryModule } from './repo-api/repo-api.module';
import { GitHttpModule } from './git-http/git-http.module';
import { SshModule } from './ssh/ssh.module';
import { DeployKeysModule } from './deploy-keys/deploy-keys.module';
import { IssuesModule } from './issues/issues.module';
import { MilestonesModule } from './milestones/milestones.module';
import { LabelsModule } from './labels/labels.module';
import { NotesApiModule } from './notes-api/notes-api.module';
import { MergeRequestsModule } from './merge-requests/merge-requests.module';
import { SnippetsModule } from './snippets/snippets.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { CiModule } from './ci/ci.module';
import { QueueModule } from './queue/queue.module';
import { HooksModule } from './webhooks/hooks.module';
import { NotificationsModule } from './notifications/notifications.module';
import { PagesModule } from './pages/pages.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, db: Database): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config, db),
        QueueModule,
        DomainEventsModule,
        AuthModule,
        ApplicationSettingsModule,
        HealthModule,
        HomeModule,
        MetricsModule,
        UsersModule,
        LdapModule,
        OauthModule,
        LicensesModule,
        NamespacesModule,
        PolicyModule,
        GitModule,
        EventsModule,
        ProjectsModule,
        GroupsModule,
        MembersModule,
        RepositoryModule,
        DeployKeysModule,
        GitHttpModule,
        SshModule,
        IssuesModule,
        MilestonesModule,
        LabelsModule,
        MergeRequestsModule,
        NotesApiModule,
        SnippetsModule,
        SubscriptionsModule,
        CiModule,
        HooksModule,
        NotificationsModule.forRoot(config),
        PagesModule.forRoot(config),
      ],
    };
  }
}
