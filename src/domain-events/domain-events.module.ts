import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DomainEvents } from './domain-events';

/** Global: every area emits domain events through DomainEvents, and declares its handlers with `@OnDomainEvent` (see domain-events.ts). */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [DomainEvents],
  exports: [DomainEvents],
})
export class DomainEventsModule {}
