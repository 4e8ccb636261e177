import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Logger } from '../common/logging/logger';
import { checkOutboundUrl, OutboundHostUnresolved, OutboundUrlRefused } from '../common/net/outbound-url';
import { APP_CONFIG, AppConfig } from '../config/config';
import { QueueJob, QueueService } from '../queue/queue.service';
import { deliver, DeliveryNetworkError, DeliveryResult } from './hook-delivery';
import { basicAuth } from './hook-url';
import { HooksRepository } from './hooks.repository';
import { WebHook } from './web-hook.entity';

export const DELIVERY_QUEUE = 'hooks.deliver';

/** `X-Gitlab-Event` values. */
export type HookEventHeader = 'System Hook' | 'Push Hook' | 'Tag Push Hook' | 'Issue Hook' | 'Merge Request Hook' | 'Note Hook' | 'Build Hook';

export interface DeliveryJob {
  hookId: number;
  event: HookEventHeader;
  /** The event name for the log (`push`, `issue`, `project_create` ...). */
  trigger: string;
  payload: unknown;
}

/** Why a delivery did not succeed, and whether another attempt may. */
class DeliveryFailed extends Error {}

/**
 * Delivers hook payloads as queue jobs: one job per hook and event, a POST with GitLab's headers,
 * the URL vetted again against every resolved address right before connecting (and the connection
 * pinned to it), no redirects, the configured timeout. Network errors and 5xx are retried with
 * exponential backoff up to the retry limit; other answers are final. Every attempt is logged
 * (last 100 per hook) and counted on the hook; N consecutive failures disable it.
 */
@Injectable()
export class HookDeliveryService implements OnModuleInit {
  constructor(
    private readonly hooks: HooksRepository,
    private readonly queue: QueueService,
    private readonly settings: ApplicationSettingsService,
    private readonly secrets: SecretsService,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const w = this.config.webhooks;
    void this.queue.register<DeliveryJob>(DELIVERY_QUEUE, {
      handler: (job) => this.run(job),
      retryLimit: w.retryLimit,
      retryDelay: w.retryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: Math.max(60, Math.ceil((w.timeoutMs * 3) / 1000)),
      batchSize: 10,
      workers: 2,
    });
  }

  /** Sends at once and waits (the system hook test); the outcome is logged like any delivery. */
  async sendNow(hook: WebHook, event: HookEventHeader, trigger: string, payload: unknown): Promise<DeliveryResult | undefined> {
    try {
      return await this.attempt(hook, { hookId: hook.id, event, trigger, payload }, 0);
    } catch {
      return undefined;
    }
  }

  private async run(job: QueueJob<DeliveryJob>): Promise<void> {
    const hook = await this.hooks.find(job.data.hookId);
    if (!hook || hook.disabledAt) return; // deleted or disabled meanwhile: nothing to deliver
    try {
      await this.attempt(hook, job.data, job.retryCount);
    } catch (e) {
      if (e instanceof DeliveryFailed && job.retryCount < job.retryLimit) throw e; // retried later, with backoff
    }
  }

  /** One attempt. Throws DeliveryFailed when another attempt may succeed (network error, 5xx). */
  private async attempt(hook: WebHook, job: DeliveryJob, attempt: number): Promise<DeliveryResult> {
    const base = { webHookId: hook.id, trigger: job.trigger, event: job.event, attempt };
    const fail = async (status: number | null, error: string, durationMs: number, body?: string) => {
      await this.hooks.log({ ...base, responseStatus: status, executionDuration: durationMs / 1000, responseBody: body ?? null, error });
      await this.hooks.recordFailure(hook.id, status, error, this.config.webhooks.disableAfterFailures);
      this.logger.warn('hook delivery failed', { hook_id: hook.id, event: job.event, attempt, status, error });
    };
    let target;
    try {
      target = await checkOutboundUrl(hook.url, (await this.settings.get()).allowLocalRequestsFromHooksAndServices);
    } catch (e) {
      const msg = e instanceof OutboundUrlRefused ? `URL ${e.message}` : String(e);
      await fail(null, msg, 0);
      // a name that does not resolve now may later (decision 34): retried; a refused address is final
      if (e instanceof OutboundHostUnresolved) throw new DeliveryFailed(msg);
      throw new Error(msg, { cause: e });
    }
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Gitlab-Event': job.event };
    if (hook.tokenEncrypted) headers['X-Gitlab-Token'] = this.secrets.decrypt(hook.tokenEncrypted);
    if (hook.urlUserinfoEncrypted) headers.Authorization = basicAuth(this.secrets.decrypt(hook.urlUserinfoEncrypted));
    let res: DeliveryResult;
    try {
      res = await deliver({
        target,
        headers,
        body: JSON.stringify(job.payload),
        verifyTls: hook.enableSslVerification,
        timeoutMs: this.config.webhooks.timeoutMs,
      });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      await fail(null, msg, e instanceof DeliveryNetworkError ? e.durationMs : 0);
      throw new DeliveryFailed(msg);
    }
    if (res.status >= 200 && res.status < 300) {
      await this.hooks.log({ ...base, responseStatus: res.status, executionDuration: res.durationMs / 1000, responseBody: res.body, error: null });
      await this.hooks.recordSuccess(hook.id, res.status);
      return res;
    }
    const msg = `HTTP ${res.status}`;
    await fail(res.status, msg, res.durationMs, res.body);
    if (res.status >= 500) throw new DeliveryFailed(msg);
    throw new Error(msg); // 3xx (redirects are not followed) and 4xx: final
  }
}
