import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Logger } from '../common/http/logger';
import { SecretsService } from '../common/crypto/secrets.service';
import { AppConfig } from '../config/config';
import { Namespace } from '../namespaces/namespace.entity';
import { User } from './user.entity';

/**
 * First start: creates the administrator `root` with ROOT_PASSWORD, or a generated password that is
 * printed once and written to `<data dir>/initial_root_password` (mode 0600). Does nothing once any
 * user exists.
 */
export async function ensureRootUser(ds: DataSource, secrets: SecretsService, config: AppConfig, logger: Logger) {
  await ds.transaction(async (m) => {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('bootstrap:root'))`);
    const rows: { n: number }[] = await m.query(`SELECT count(*)::int AS n FROM users`);
    if (rows[0].n > 0) return;
    const generated = !config.rootPassword;
    const password = config.rootPassword ?? secrets.generateToken(24);
    const token = secrets.generateToken();
    const repo = m.getRepository(User);
    const root = await repo.save(
      repo.create({
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
      }),
    );
    await m.getRepository(Namespace).insert({
      name: 'root',
      path: 'root',
      kind: 'user',
      ownerId: root.id,
      description: '',
      visibilityLevel: 20,
    });
    if (generated) {
      const file = join(config.dataDir, 'initial_root_password');
      writeFileSync(file, `Username: root\nPassword: ${password}\n`, { mode: 0o600 });
      // Printed once, on the console only: the request logs never carry it.
      process.stdout.write(
        `\n  Created the administrator "root" with password: ${password}\n  (also written to ${file}; change it after signing in)\n\n`,
      );
    }
    logger.info('created administrator root', { generated_password: generated });
  });
}
