import { Global, Module } from '@nestjs/common';
import { GitService } from './git.service';

/** The one module that runs git (architecture rule 9). */
@Global()
@Module({ providers: [GitService], exports: [GitService] })
export class GitModule {}
