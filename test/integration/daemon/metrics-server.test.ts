import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics, type Metrics } from '../../../src/observability/metrics.js';
import { closeQueues, createQueues } from '../../../src/queue/connection.js';
import { createKeys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createLifecycle, type Lifecycle } from '../../../src/daemon/lifecycle.js';
import { queueSource, serveMetrics } from '../../../src/daemon/metrics-server.js';
import { connectionsOf } from '../../../src/config/connections.js';
import type { Queue } from 'bullmq';
import { useRedis } from '../../helpers/redis.js';

describe('the metrics of a worker process (TAXSYNC_METRICS_PORT)', () => {
  const ctx = useRedis();
  let lifecycle: Lifecycle;
  let queues: Record<QueueName, Queue>;
  let metrics: Metrics;

  beforeEach(() => {
    lifecycle = createLifecycle({ logger: createLogger({ level: 'silent' }), deadlineMs: 5_000 });
    queues = createQueues(ctx.redis, ctx.prefix);
    metrics = createMetrics({ defaultMetrics: false });
  });
  afterEach(async () => {
    await lifecycle.shutdown('test over');
    await closeQueues(queues);
  });

  it('serves GET /metrics with queue depth, oldest waiting age, dead letters and stale drops read from Redis', async () => {
    const now = Date.now();
    metrics.watchQueues({ ...queueSource(queues, ctx.redis, createKeys(ctx.prefix), connectionsOf([])), clock: () => now });
    await queues.transactions.add('transaction', {}, { jobId: 'old', timestamp: now - 90_000 });
    await queues.transactions.add('transaction', {}, { jobId: 'new', timestamp: now - 1_000 });
    await queues.customers.add('customer', {}, { jobId: 'later', delay: 60_000 });
    await queues['dead-letter'].add('API_INVALID', {}, { jobId: 'dl-1' });
    await ctx.redis.hset(`${ctx.prefix}:counters`, 'stale_events', '3');
    // The last `taxsync reconcile` run's summary (src/reconcile/run.ts, recordSummary).
    await ctx.redis.hset(`${ctx.prefix}:counters`, { 'reconcile:missing': 1, 'reconcile:extra': 0, 'reconcile:differing': 2, 'reconcile:matched': 7, 'reconcile:finished_at_ms': 1_700_000_000_000 });
    metrics.observeJob('transactions', 'nothing-new');

    const url = await serveMetrics({ metrics, host: '127.0.0.1', port: 0, logger: createLogger({ level: 'silent' }), lifecycle });
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('taxsync_queue_jobs{queue="transactions",state="waiting"} 2');
    expect(text).toContain('taxsync_queue_jobs{queue="customers",state="delayed"} 1');
    expect(text).toContain('taxsync_queue_oldest_waiting_seconds{queue="transactions"} 90');
    expect(text).toContain('taxsync_queue_oldest_waiting_seconds{queue="customers"} 0');
    expect(text).toContain('taxsync_dead_letter_entries 1');
    expect(text).toContain('taxsync_stale_events_total 3');
    expect(text).toContain('taxsync_jobs_total{queue="transactions",outcome="nothing-new"} 1');
    expect(text).toContain('taxsync_coalesced_events_total{queue="transactions"} 1');
    expect(text).toContain('taxsync_reconcile_findings{kind="missing"} 1');
    expect(text).toContain('taxsync_reconcile_findings{kind="differing"} 2');
    expect(text).toContain('taxsync_reconcile_last_run_timestamp_seconds 1700000000');
    expect((await fetch(`${url}/other`)).status).toBe(404);
  });

  it('still answers when Redis cannot be read: the gauges keep their last value and the failure is counted', async () => {
    const working = queueSource(queues, ctx.redis, createKeys(ctx.prefix), connectionsOf([]));
    metrics.watchQueues(working);
    await queues['dead-letter'].add('API_INVALID', {}, { jobId: 'dl-1' });
    await ctx.redis.hset(`${ctx.prefix}:counters`, 'stale_events', '2');
    expect(await metrics.registry.metrics()).toContain('taxsync_dead_letter_entries 1');

    const hanging = { getJobCountByTypes: () => new Promise<number>(() => {}) } as unknown as Queue;
    metrics.watchQueues({ ...working, deadLetter: hanging, counters: () => Promise.reject(new Error('redis away')) });
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_dead_letter_entries 1');
    expect(text).toContain('taxsync_stale_events_total 2');
    // The failures of one scrape are counted from the next one on.
    const next = await metrics.registry.metrics();
    expect(next).toContain('taxsync_metrics_read_errors_total{metric="taxsync_dead_letter_entries"} 1');
    expect(next).toContain('taxsync_metrics_read_errors_total{metric="taxsync_stale_events_total"} 1');
  });
});
