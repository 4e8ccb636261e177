import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { RefUpdate } from '../git/smart-http';

/** A push that moved refs, after its events were recorded. The CI and hooks areas subscribe. */
export interface PushReceived {
  projectId: number;
  userId: number;
  updates: RefUpdate[];
}

/** In-process domain events (emitted after the change is committed). */
@Injectable()
export class DomainEvents {
  private readonly emitter = new EventEmitter();

  onPushReceived(listener: (e: PushReceived) => void | Promise<void>): void {
    this.emitter.on('push.received', (e: PushReceived) => {
      Promise.resolve()
        .then(() => listener(e))
        .catch(() => undefined);
    });
  }

  pushReceived(e: PushReceived): void {
    this.emitter.emit('push.received', e);
  }
}
