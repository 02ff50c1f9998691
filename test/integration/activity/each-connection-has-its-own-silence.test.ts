import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readReports } from '../../../src/activity/reports.js';
import { connectionAges } from '../../../src/activity/silence.js';
import { activityKeys, hourStart, lastEvents, withActivity } from '../../../src/activity/store.js';
import { loadConfig } from '../../../src/config/index.js';
import { loadConnections, type Connection } from '../../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { queueSource } from '../../../src/daemon/metrics-server.js';
import { reportsView } from '../../../src/http/admin/reports-view.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createVarianceStore } from '../../../src/variance/store.js';
import { buildCli, runCli } from '../../helpers/cli.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';
import { customerOf, twoShops } from '../../helpers/two-shops.js';

/**
 * Two WooCommerce shops of one source (shop-de without a prefix, shop-fr with 'fr-'): each has its
 * own last event and its own silence in `taxsync status`, /metrics and the web view, so the German
 * shop going quiet is seen while the French one still sends. An installation upgrading keeps the
 * last events it wrote per source, read as their connection's, and one of default connections
 * shows what it showed before, the ERP as 'erp'.
 */

const NOW = Date.UTC(2026, 10, 25, 12, 30, 0);
const HOUR = 3_600_000;
const SIX_HOURS = 6 * HOUR;

describe('each connection has its own silence (real Redis)', () => {
  const ctx = useRedis();
  const shops = twoShops();
  const de = shops.connections.get('shop-de')!;
  const fr = shops.connections.get('shop-fr')!;
  let pipeline: Pipeline;

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await pipeline.close();
  });

  /** Deliveries accepted through the webhook server's producer at the times given. */
  async function accept(now: number, deliveries: [agoMs: number, connection: Connection, id: string][]): Promise<void> {
    let clock = now;
    const producer = withActivity(pipeline.producer, pipeline.keys, () => clock);
    for (const [agoMs, connection, id] of deliveries) {
      clock = now - agoMs;
      await producer.accept({ events: [customerOf(connection, id)] });
    }
  }

  it('flags the shop quiet for seven hours and not the other shop of the same source, in the ages, the metric and the web view', async () => {
    await accept(NOW, [
      [7 * HOUR, de, '1001'],
      [7 * HOUR, de, '1002'],
      [5 * 60_000, fr, '1001'],
    ]);
    const ages = connectionAges(await lastEvents(ctx.redis, pipeline.keys), shops.connections, new Date(NOW), SIX_HOURS);
    expect(ages.map((a) => [a.id, a.prefix ?? '', a.age_s, a.silent])).toEqual([
      ['shop-de', '', 7 * 3600, true],
      ['shop-fr', 'fr-', 300, false],
    ]);

    const metrics = createMetrics({ defaultMetrics: false });
    metrics.watchQueues({ ...queueSource(pipeline.queues, ctx.redis, pipeline.keys, shops.connections), clock: () => NOW });
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_source_last_event_age_seconds{connection="shop-de",source="woocommerce"} 25200');
    expect(text).toContain('taxsync_source_last_event_age_seconds{connection="shop-fr",source="woocommerce"} 300');

    const data = await readReports({ ...reportsDeps(), connections: shops.connections });
    const series = Object.fromEntries(data.events.series.map((s) => [s.name, s.values]));
    expect(series['shop-de']).toEqual([0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    expect(series['shop-fr']).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    const page = reportsView(data).value;
    expect(page.match(/role="alert"/g)).toHaveLength(1);
    expect(page).toContain('<strong>shop-de</strong> (woocommerce, source woocommerce) has sent nothing for 7 h');
    expect(page).not.toContain('<strong>shop-fr</strong>');
    expect(page).toMatch(/<tr><td>shop-fr<\/td><td>woocommerce<\/td><td>woocommerce<\/td><td>fr-<\/td>/);
  });

  const reportsDeps = () => ({
    redis: ctx.redis,
    keys: pipeline.keys,
    deadLetters: pipeline.deadLetters,
    variances: createVarianceStore(ctx.redis, pipeline.keys),
    silenceMs: SIX_HOURS,
    now: new Date(NOW),
  });

  /** What the activity store held before connections: last events and an hour's counts keyed by source. */
  async function plantBeforeConnections(last: Record<string, number>, hourCounts: Record<string, number>): Promise<void> {
    const k = activityKeys(pipeline.keys);
    await ctx.redis.hset(k.sourceLast, Object.fromEntries(Object.entries(last).map(([source, ms]) => [source, String(ms)])));
    await ctx.redis.hset(k.sourceHour(hourStart(NOW - 7 * HOUR)), hourCounts);
  }

  it('reads what an installation wrote per source before connections as the connection now writing it, until that one sends', async () => {
    await plantBeforeConnections({ woocommerce: NOW - 7 * HOUR }, { woocommerce: 4 });
    const before = connectionAges(await lastEvents(ctx.redis, pipeline.keys), shops.connections, new Date(NOW), SIX_HOURS);
    expect(before.map((a) => [a.id, a.silent, a.last_event_at === null])).toEqual([
      ['shop-de', true, false],
      ['shop-fr', false, true],
    ]);
    // The plot carries on: the hour counted per source is shop-de's.
    const data = await readReports({ ...reportsDeps(), connections: shops.connections });
    expect(data.events.series).toEqual([{ name: 'shop-de', values: [0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0] }]);

    await accept(NOW, [[60_000, de, '1003']]);
    const after = connectionAges(await lastEvents(ctx.redis, pipeline.keys), shops.connections, new Date(NOW), SIX_HOURS);
    expect(after.map((a) => [a.id, a.age_s, a.silent])).toEqual([
      ['shop-de', 60, false],
      ['shop-fr', null, false],
    ]);
  });

  it("shows an installation of default connections as before, the ERP's last event under 'erp' with its source 'api'", async () => {
    const env = { ERP_WEBHOOK_SECRET: 'whsec_ZXJwLWRlZmF1bHQtc2VjcmV0LTMyLWJ5dGVzIQ==', STRIPE_WEBHOOK_SECRET: 'whsec_c3RyaXBlLXNlY3JldC0zMi1ieXRlcy1sb25nISE=' };
    const defaults = loadConnections(loadConfig(env), DEFAULT_SETTINGS, env);
    // Written before connections ('api'), then the same ERP sends through its default connection.
    await plantBeforeConnections({ api: NOW - 9 * HOUR, stripe: NOW - 8 * HOUR }, { api: 1 });
    await accept(NOW, [[7 * HOUR, defaults.get('erp')!, 'C-1']]);
    const ages = connectionAges(await lastEvents(ctx.redis, pipeline.keys), defaults, new Date(NOW), SIX_HOURS);
    expect(ages).toEqual([
      { id: 'stripe', platform: 'stripe', source: 'stripe', last_event_at: new Date(NOW - 8 * HOUR).toISOString(), age_s: 8 * 3600, silent: true },
      { id: 'erp', platform: 'erp', source: 'api', last_event_at: new Date(NOW - 7 * HOUR).toISOString(), age_s: 7 * 3600, silent: true },
    ]);
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.watchQueues({ ...queueSource(pipeline.queues, ctx.redis, pipeline.keys, defaults), clock: () => NOW });
    const text = await metrics.registry.metrics();
    expect(text).toContain('taxsync_source_last_event_age_seconds{connection="erp",source="api"} 25200');
    expect(text).not.toContain('connection="api"');
  });

  describe('taxsync status', () => {
    let main: string;
    beforeAll(async () => {
      main = await buildCli();
    }, 180_000);

    async function status(args: string[]): Promise<string> {
      const run = await runCli(main, ['status', ...args], { ...shops.env, REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, TAXSYNC_SOURCE_SILENCE: '6h', LOG_LEVEL: 'error' });
      expect(run.code, run.output).toBe(0);
      return run.stdout;
    }

    it('lists each shop with its platform, source, prefix and its own last event, and marks only the quiet one SILENT', async () => {
      // status reads the real clock: the planted times are relative to it.
      const now = Date.now();
      await accept(now, [
        [7 * HOUR, de, '1001'],
        [5 * 60_000, fr, '1001'],
      ]);
      const report = JSON.parse(await status(['--json'])) as { connections: { id: string; platform: string; source: string; prefix?: string; last_event_at: string; silent: boolean }[] };
      expect(report.connections.map((c) => [c.id, c.platform, c.source, c.prefix, c.silent])).toEqual([
        ['shop-de', 'woocommerce', 'woocommerce', undefined, true],
        ['shop-fr', 'woocommerce', 'woocommerce', 'fr-', false],
      ]);
      expect(report.connections[0]!.last_event_at).toBe(new Date(now - 7 * HOUR).toISOString());

      const lines = (await status([])).split('\n');
      expect(lines).toContainEqual(expect.stringMatching(/^CONNECTION +PLATFORM +SOURCE +PREFIX +LAST EVENT +AGE$/));
      expect(lines.filter((l) => l.includes('SILENT'))).toEqual([expect.stringMatching(/^shop-de +woocommerce +woocommerce +\S+ +7 h +SILENT$/)]);
      expect(lines).toContainEqual(expect.stringMatching(/^shop-fr +woocommerce +woocommerce +fr- +\S+ +5 min$/));
    }, 60_000);

    it('lists a shop that never sent as never having sent', async () => {
      await accept(Date.now(), [[60_000, fr, '1001']]);
      const lines = (await status([])).split('\n');
      expect(lines).toContainEqual(expect.stringMatching(/^shop-de +woocommerce +woocommerce +never +-$/));
    }, 60_000);
  });
});
