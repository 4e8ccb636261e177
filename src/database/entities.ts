import { ApplicationSettings } from '../application-settings/application-settings.entity';
import { Namespace } from '../namespaces/namespace.entity';
import { OauthAccessToken } from '../oauth/oauth-access-token.entity';
import { Email } from '../users/email.entity';
import { Identity } from '../users/identity.entity';
import { SshKey } from '../users/key.entity';
import { User } from '../users/user.entity';

/** Every entity the data source maps. */
export const ENTITIES = [User, Identity, SshKey, Email, Namespace, OauthAccessToken, ApplicationSettings];
