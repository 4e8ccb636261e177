import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { AppModule } from '../app.module';
import { DomainError } from '../common/errors/domain-errors';
import { toDto } from '../common/dto/validation.pipe';
import { AppConfig } from '../config/config';
import { openDatabase } from '../database/data-source';
import { CreateUserDto, UpdateUserDto } from '../users/dto/user.dto';
import { UserDirectory } from '../users/user-directory.service';
import { UsersService } from '../users/users.service';

/**
 * `create-admin` and `reset-password`: through the app's own users service, so the same rules apply
 * as on the API (username/email uniqueness, password length, a personal namespace, hashed storage).
 * A generated password is printed once.
 */
export async function adminCommands(
  config: AppConfig,
  command: 'create-admin' | 'reset-password',
  args: { username: string; email?: string; password?: string },
): Promise<number> {
  const db = await openDatabase(config);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, db), { logger: ['error'] });
  try {
    const users = app.get(UsersService);
    const generated = !args.password;
    const password = args.password ?? randomBytes(18).toString('base64url');
    if (command === 'create-admin') {
      await users.create(toDto(CreateUserDto, { username: args.username, email: args.email, name: args.username, password, admin: true, confirm: false }));
      const [user] = await app.get(UserDirectory).byUsername(args.username);
      process.stdout.write(`created administrator ${user.username} (id ${user.id})\n`);
    } else {
      const [user] = await app.get(UserDirectory).byUsername(args.username);
      if (!user) {
        process.stderr.write(`no user named ${args.username}\n`);
        return 1;
      }
      await users.update(user.id, toDto(UpdateUserDto, { password }));
      process.stdout.write(`password of ${user.username} reset\n`);
    }
    if (generated) process.stdout.write(`password: ${password}\n`);
    return 0;
  } catch (e) {
    if (e instanceof DomainError) {
      process.stderr.write(`refused: ${JSON.stringify(e.body())}\n`);
      return 1;
    }
    throw e;
  } finally {
    await app.close();
    await db.close();
  }
}
