import { Inject, Injectable } from '@nestjs/common';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretsService } from '../common/crypto/secrets.service';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { NamespacesService } from '../namespaces/namespaces.service';
import { UsersRepository } from './users.repository';

/**
 * First start: creates the administrator `root` with ROOT_PASSWORD, or a generated password that is
 * written to `<data dir>/initial_root_password` (mode 0600) and never to the log (which names the
 * file: logs are shipped and kept where a password must not be). Does nothing once any user exists.
 */
@Injectable()
export class RootUser {
  constructor(
    private readonly tx: Transactions,
    private readonly users: UsersRepository,
    private readonly namespaces: NamespacesService,
    private readonly secrets: SecretsService,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async ensure(): Promise<void> {
    const { config, secrets } = this;
    await this.tx.run(async (tx) => {
      if ((await this.users.lockAndCount(tx)) > 0) return;
      const generated = !config.rootPassword;
      const password = config.rootPassword ?? secrets.generateToken(24);
      const token = secrets.generateToken();
      const root = await this.users.insert(tx, {
        username: 'root',
        email: 'admin@example.com',
        name: 'Administrator',
        encryptedPassword: await secrets.hashPassword(password),
        state: 'active',
        admin: true,
        projectsLimit: 100000,
        canCreateGroup: true,
        external: false,
        bio: null,
        location: null,
        skype: '',
        linkedin: '',
        twitter: '',
        websiteUrl: '',
        themeId: 2,
        colorSchemeId: 1,
        twoFactorEnabled: false,
        signInCount: 0,
        confirmedAt: new Date(),
        privateTokenDigest: secrets.digest(token),
        privateTokenEncrypted: secrets.encrypt(token),
      });
      await this.namespaces.insertPersonal(tx, root.id, root.username);
      if (generated) {
        const file = join(config.dataDir, 'initial_root_password');
        writeFileSync(file, `Username: root\nPassword: ${password}\n`, { mode: 0o600 });
        chmodSync(file, 0o600); // `mode` applies only to a file that did not exist yet
        // at warn: the operator must read the file, whatever LOG_LEVEL hides
        this.logger.warn(`created administrator root; its generated password is in ${file} (change it after signing in)`, { password_file: file });
      } else {
        this.logger.info('created administrator root (password: ROOT_PASSWORD)');
      }
    });
  }
}
