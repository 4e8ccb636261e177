import { Global, Module } from '@nestjs/common';
import { PolicyRepository } from './policy.repository';
import { PolicyService } from './policy.service';

@Global()
@Module({ providers: [PolicyService, PolicyRepository], exports: [PolicyService] })
export class PolicyModule {}
