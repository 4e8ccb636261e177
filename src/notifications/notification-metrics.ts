import { Counter } from 'prom-client';
import { registry } from '../metrics/registry';

const mails = new Counter({
  name: 'notification_mails_total',
  help: 'notification mails by result: sent (accepted by the SMTP server), retried (a temporary failure, tried again later), failed (given up or refused for good), skipped (the recipient may no longer see the thing)',
  labelNames: ['result'],
  registers: [registry],
});
for (const result of ['sent', 'retried', 'failed', 'skipped']) mails.inc({ result }, 0);

/** Counts one mail's attempt outcome (shown by /-/metrics). */
export function notificationMail(result: 'sent' | 'retried' | 'failed' | 'skipped'): void {
  mails.inc({ result });
}
