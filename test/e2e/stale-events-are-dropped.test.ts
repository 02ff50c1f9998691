import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/queue/keys.js';
import { readTrace } from '../../src/queue/trace.js';
import { fixture, startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const ORDER = fixture('shopify/orders-create-discounts-shipping-taxes.json');
const ORDER_ID = '5627384902156';
const NEWER_UPDATED_AT = '2026-11-20T05:10:00-05:00';

describe('an event older than the newest one held for its record', () => {
  const ctx = useRedis();
  let daemon: Daemon;

  beforeEach(async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await daemon.stop();
  });

  const upsertsOf = (endpoint: string, key: string) => daemon.emulator.requestLog.entries().filter((e) => e.endpoint === endpoint && e.record?.key === key);

  it('is dropped, counted, traced and never sent (Shopify and ERP)', async () => {
    // The newer versions first, each applied…
    const newerOrder = { ...(ORDER.body as Record<string, unknown>), updated_at: NEWER_UPDATED_AT };
    const newerHeaders = { ...ORDER.headers, 'x-shopify-topic': 'orders/updated', 'x-shopify-event-id': 'e2e-stale-newer', 'x-shopify-webhook-id': 'e2e-stale-newer' };
    expect((await daemon.post('shopify', newerOrder, newerHeaders)).status).toBe(202);
    expect((await daemon.post('erp', erpCustomer('C-STALE', 5))).status).toBe(202);
    await eventually(async () => upsertsOf('transactions.upsert', `transaction:shopify:${ORDER_ID}`).length === 1 && (await daemon.idle()));
    expect(upsertsOf('customers.upsert', 'customer:api:C-STALE').map((e) => e.status)).toEqual([201]);

    // …then the older ones arrive late.
    const olderOrder = await daemon.post('shopify', ORDER.body, ORDER.headers);
    expect(await olderOrder.json()).toMatchObject({ status: 'accepted', accepted: 1, queued: 0, stale: 1 });
    const olderCustomer = await daemon.post('erp', erpCustomer('C-STALE', 3));
    expect(await olderCustomer.json()).toMatchObject({ status: 'accepted', accepted: 1, queued: 0, stale: 1 });
    // The webhook answered after storing; once no job is left, whatever they queued has run.
    await eventually(() => daemon.idle());

    // Never sent: one upsert per record, and the tax engine holds the newer versions.
    expect(upsertsOf('transactions.upsert', `transaction:shopify:${ORDER_ID}`)).toHaveLength(1);
    expect(upsertsOf('customers.upsert', 'customer:api:C-STALE')).toHaveLength(1);
    const order = await daemon.api.tax.transactions.getByKey('shopify', ORDER_ID);
    expect(Date.parse(String(order.external_updated_at))).toBe(Date.parse(NEWER_UPDATED_AT));
    expect((await daemon.api.tax.customers.getByKey('api', 'C-STALE')).name).toBe('C-STALE version 5');

    // Counted: on /metrics and in the counters hash.
    const metrics = await (await fetch(`${daemon.webhookUrl}/metrics`)).text();
    expect(metrics).toContain('taxsync_events_received_total{connector="shopify",connection="shopify",outcome="stale"} 1');
    expect(metrics).toContain('taxsync_events_received_total{connector="erp",connection="erp",outcome="stale"} 1');
    expect(await ctx.redis.hget(`${ctx.prefix}:counters`, 'stale_events')).toBe('2');

    // Visible in each record's trace, and the dropped event was never the one sent.
    const keys = createKeys(ctx.prefix);
    const customerTrace = await readTrace(ctx.redis, keys, 'customer|api|C-STALE');
    expect(customerTrace).toContainEqual(expect.objectContaining({ step: 'stale', event_id: 'erp-C-STALE-v3', connector: 'erp' }));
    expect(customerTrace.filter((t) => t.step === 'sent').map((t) => t.event_id)).toEqual(['erp-C-STALE-v5']);
    const orderTrace = await readTrace(ctx.redis, keys, `transaction|shopify|${ORDER_ID}`);
    const staleOrder = orderTrace.find((t) => t.step === 'stale');
    expect(staleOrder).toMatchObject({ connector: 'shopify' });
    expect(Date.parse(staleOrder!.occurred_at!)).toBe(Date.parse('2026-11-20T04:58:15-05:00'));
    expect(orderTrace.filter((t) => t.step === 'sent')).toHaveLength(1);
  });
});
