import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readReports } from '../../../src/activity/reports.js';
import { withActivity } from '../../../src/activity/store.js';
import { connectionAges } from '../../../src/activity/silence.js';
import { lastEvents } from '../../../src/activity/store.js';
import { loadConfig } from '../../../src/config/index.js';
import { loadConnections } from '../../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { queueSource } from '../../../src/daemon/metrics-server.js';
import { CanonicalEvent } from '../../../src/domain/events.js';
import { reportsView } from '../../../src/http/admin/reports-view.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createVarianceStore } from '../../../src/variance/store.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';
import { buildCli, runCli } from '../../helpers/cli.js';

/**
 * Source silence and the web view's plots, in an installation of default connections (one per
 * platform, named after it, no prefix): events accepted through the webhook server's producer
 * record their connection's activity. A connection quiet for more than TAXSYNC_SOURCE_SILENCE
 * (planted: Shopify's last event seven hours ago, a six-hour threshold) is flagged — in the metric,
 * the ages `status` prints and the web view's warning — and one that sent minutes ago is not.
 */

/** Shopify's and Stripe's default connections take webhooks; the others are idle. */
const ENV = { SHOPIFY_WEBHOOK_SECRET: 'shp-secret', STRIPE_WEBHOOK_SECRET: 'whsec_c3RyaXBlLXNlY3JldC0zMi1ieXRlcy1sb25nISE=' };
const CONNECTIONS = loadConnections(loadConfig(ENV), DEFAULT_SETTINGS, ENV);

const NOW = Date.UTC(2026, 10, 25, 12, 30, 0);
const SIX_HOURS = 6 * 3_600_000;

const customer = (source: string, id: string) =>
  CanonicalEvent.parse({
    id: `evt-${source}-${id}`,
    type: 'customer.upserted',
    occurred_at: '2026-11-25T00:00:00Z',
    connector: source,
    record: { kind: 'customer', source, external_id: id },
    data: { name: id },
  });

describe('source silence and activity plots (real Redis)', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await pipeline.close();
  });

  async function plant(): Promise<void> {
    let clock = NOW - 7 * 3_600_000;
    const producer = withActivity(pipeline.producer, pipeline.keys, () => clock);
    await producer.accept({ events: [customer('shopify', 'a'), customer('shopify', 'b')] });
    clock = NOW - 10 * 60_000;
    await producer.accept({ events: [customer('stripe', 'c')] });
    clock = NOW - 5 * 60_000;
    await producer.accept({ events: [customer('stripe', 'd'), customer('stripe', 'e')] });
    await pipeline.deadLetters.add({
      queue: 'transactions',
      record: { kind: 'transaction', source: 'stripe', external_id: 'in_1' },
      event: null,
      error: { code: 'API_INVALID', message: 'rejected', retryable: false },
      http: null,
      attempts: 1,
      first_failed_at: new Date(NOW - 2 * 3_600_000).toISOString(),
      last_failed_at: new Date(NOW - 2 * 3_600_000).toISOString(),
    });
  }

  it('flags the connection silent for seven hours, and not the one that sent minutes ago', async () => {
    await plant();
    const ages = connectionAges(await lastEvents(ctx.redis, pipeline.keys), CONNECTIONS, new Date(NOW), SIX_HOURS);
    expect(ages).toEqual([
      { id: 'shopify', platform: 'shopify', source: 'shopify', last_event_at: new Date(NOW - 7 * 3_600_000).toISOString(), age_s: 7 * 3600, silent: true },
      { id: 'stripe', platform: 'stripe', source: 'stripe', last_event_at: new Date(NOW - 5 * 60_000).toISOString(), age_s: 300, silent: false },
    ]);

    const metrics = createMetrics({ defaultMetrics: false });
    metrics.watchQueues({ ...queueSource(pipeline.queues, ctx.redis, pipeline.keys, CONNECTIONS), clock: () => NOW });
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_source_last_event_age_seconds{connection="shopify",source="shopify"} 25200');
    expect(text).toContain('taxsync_source_last_event_age_seconds{connection="stripe",source="stripe"} 300');
  });

  it('plots events per connection and dead letters per class by hour, and warns of the silent connection only', async () => {
    await plant();
    const data = await readReports({
      redis: ctx.redis,
      keys: pipeline.keys,
      deadLetters: pipeline.deadLetters,
      variances: createVarianceStore(ctx.redis, pipeline.keys),
      silenceMs: SIX_HOURS,
      connections: CONNECTIONS,
      now: new Date(NOW),
    });
    expect(data.events.buckets).toHaveLength(12);
    const series = Object.fromEntries(data.events.series.map((s) => [s.name, s.values]));
    // 12:30 now: the last bucket is 12:00, seven hours back is 05:30 → the 05:00 bucket (index 4).
    expect(series.shopify).toEqual([0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    expect(series.stripe).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3]);
    expect(data.deadLetters.series).toEqual([{ name: 'invalid', values: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0] }]);

    const page = reportsView(data).value;
    expect(page).toContain('<svg');
    expect(page.match(/role="alert"/g)).toHaveLength(1);
    expect(page).toContain('<strong>shopify</strong> (shopify, source shopify) has sent nothing for 7 h');
    expect(page).not.toContain('<strong>stripe</strong>');
    expect(page).toContain('No invoice where the tax charged differs');
  });

  describe('taxsync status', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    async function status(args: string[]): Promise<string> {
      const run = await runCli(main, ['status', ...args], { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, TAXSYNC_SOURCE_SILENCE: '6h', LOG_LEVEL: 'error' });
      expect(run.code, run.output).toBe(0);
      return run.stdout;
    }

    it('marks the connection silent for seven hours SILENT, and only that one', async () => {
      // status reads the real clock: the planted times are relative to it.
      const now = Date.now();
      let clock = now - 7 * 3_600_000;
      const producer = withActivity(pipeline.producer, pipeline.keys, () => clock);
      await producer.accept({ events: [customer('shopify', 'a')] });
      clock = now - 5 * 60_000;
      await producer.accept({ events: [customer('stripe', 'b')] });

      const report = JSON.parse(await status(['--json'])) as { connections: { id: string; silent: boolean }[]; source_silence_s: number };
      expect(report.connections.map((c) => [c.id, c.silent])).toEqual([
        ['shopify', true],
        ['stripe', false],
      ]);
      expect(report.source_silence_s).toBe(6 * 3600);
      const lines = (await status([])).split('\n');
      expect(lines.filter((l) => l.includes('SILENT'))).toEqual([expect.stringMatching(/^\s*shopify\s/)]);
    }, 60_000);
  });
});
