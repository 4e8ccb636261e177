import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { LdapSyncService } from './ldap-sync.service';
import { LdapService } from './ldap.service';

/**
 * LDAP sign-in and synchronisation (README "Signing in with LDAP"). Off unless LDAP servers are
 * configured (LDAP_SERVERS or LDAP_URL ...): it then takes part in every password sign-in
 * (SessionService) and runs the periodic access check on the queue.
 */
@Module({
  imports: [UsersModule],
  providers: [LdapService, LdapSyncService],
  exports: [LdapService, LdapSyncService],
})
export class LdapModule {}
