import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { createAuditLog } from '../../src/queue/audit.js';
import type { NewDeadLetter } from '../../src/queue/dead-letter.js';
import type { RetryPolicy } from '../../src/queue/retry.js';
import { createVatLedger } from '../../src/queue/vat-ledger.js';
import type { DlqDeps } from '../../src/dead-letters/service.js';
import { afterEach, beforeEach } from 'vitest';
import { TaxsyncError } from '../../src/domain/errors.js';
import { createPipeline, type Pipeline } from './pipeline.js';
import type { RedisTestContext } from './redis.js';

/**
 * A signed Shopify `customers/create` delivery kept by ingest as unreadable: `body` decides whether
 * today's connector reads it on replay.
 */
export function keptDelivery(id: string, body: unknown, options: { at?: string; message?: string } = {}): NewDeadLetter {
  const at = options.at ?? '2026-11-21T02:40:14.870Z';
  return {
    id,
    queue: 'ingest',
    record: null,
    event: null,
    error: { code: 'INVALID_PAYLOAD', message: options.message ?? 'payload does not match the schema', retryable: false },
    http: null,
    raw: {
      connector: 'shopify',
      topic: 'customers/create',
      delivery_id: `delivery-${id}`,
      content_type: 'application/json',
      received_at: at,
      body: JSON.stringify(body),
      body_truncated: false,
    },
    attempts: 0,
    first_failed_at: at,
    last_failed_at: at,
  };
}

/** The dead-letter tools' dependencies over a test pipeline, writing the audit log as `actor`. */
export function pipelineDlqDeps(pipeline: Pipeline, options: { actor: string; retry?: RetryPolicy }): DlqDeps {
  return {
    queues: pipeline.queues,
    keys: pipeline.keys,
    deadLetters: pipeline.deadLetters,
    producer: pipeline.producer,
    records: pipeline.records,
    ledger: createVatLedger(pipeline.producerConnection, pipeline.keys, { leaseMs: 30_000 }),
    audit: createAuditLog(pipeline.producerConnection, pipeline.keys, { actor: options.actor }),
    settings: DEFAULT_SETTINGS,
    trace: { maxEntries: 50, maxAgeMs: 600_000 },
    ...(options.retry ? { retry: options.retry } : {}),
  };
}

/** A test pipeline whose customers worker fails until told otherwise, with the dead-letter tools over it. */
export interface FlakyCustomers {
  pipeline: Pipeline;
  deps: DlqDeps;
  /** While true the worker answers every customer with a 500 (one attempt: straight to the dead-letter queue). */
  broken: boolean;
  /** What the worker accepted, as `external_id:name`. */
  sent: string[];
}

/**
 * Per test: a pipeline (one attempt per job) whose customers worker throws API_SERVER_ERROR while
 * `broken`, then accepts; dead-letter tools auditing as `tester`. Closed after each test.
 */
export function useFlakyCustomers(ctx: RedisTestContext): FlakyCustomers {
  const retry = { attempts: 1, baseMs: 10, capMs: 20 };
  const flaky = { broken: true, sent: [] } as unknown as FlakyCustomers;
  beforeEach(async () => {
    flaky.pipeline = await createPipeline(ctx.url, ctx.prefix, { retry });
    flaky.deps = pipelineDlqDeps(flaky.pipeline, { actor: 'tester', retry });
    flaky.broken = true;
    flaky.sent = [];
    await flaky.pipeline.startWorker('customers', async (event, hctx) => {
      if (flaky.broken) throw new TaxsyncError('API_SERVER_ERROR', 'PUT /v1/customers/ answered 500: injected');
      flaky.sent.push(`${hctx.record.external_id}:${event.type === 'customer.upserted' ? event.data.name : undefined}`);
      return { kind: 'done', detail: 'ok', status: 200 };
    });
  });
  afterEach(async () => {
    await flaky.pipeline.close();
  });
  return flaky;
}
