import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Subscription } from './subscription.entity';
import { SubscriptionsService } from './subscriptions.service';

/** Subscriptions have no routes of their own: issues and labels expose them. */
@Module({ imports: [TypeOrmModule.forFeature([Subscription])], providers: [SubscriptionsService], exports: [SubscriptionsService] })
export class SubscriptionsModule {}
