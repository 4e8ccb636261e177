import { Module } from '@nestjs/common';
import { SubscriptionsService } from './subscriptions.service';

/** Subscriptions have no routes of their own: issues and labels expose them. */
@Module({ providers: [SubscriptionsService], exports: [SubscriptionsService] })
export class SubscriptionsModule {}
