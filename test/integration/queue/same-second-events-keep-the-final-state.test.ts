import { readFileSync } from 'node:fs';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shopifyConnector } from '../../../src/connectors/shopify/index.js';
import { stripeConnector } from '../../../src/connectors/stripe/index.js';
import { woocommerceConnector as wooConnector } from '../../../src/connectors/woocommerce/index.js';
import type { Connector } from '../../../src/connectors/types.js';
import type { CanonicalEvent } from '../../../src/domain/events.js';
import { closeQueues, createQueues, createRedis } from '../../../src/queue/connection.js';
import { createDeadLetterStore } from '../../../src/queue/dead-letter.js';
import { createKeys, type Keys } from '../../../src/queue/keys.js';
import type { QueueName } from '../../../src/queue/names.js';
import { createProducer, type Producer } from '../../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../../src/queue/record-state.js';
import { useRedis } from '../../helpers/redis.js';

// Finding 5 (issue 15): event times have one-second resolution, so the order of states within a
// second is the object's own (a void after everything, a cancellation after payment), and a void
// is final whatever time a late non-final state carries.

interface Fixture {
  headers: Record<string, string>;
  body: Record<string, unknown>;
  receivedAt: string;
}
const fixture = (path: string): Fixture => JSON.parse(readFileSync(new URL(`../../fixtures/connectors/${path}`, import.meta.url), 'utf8')) as Fixture;

/** The connector's parse of a (modified) fixture payload, signature checks aside: its canonical events. */
function eventsOf(connector: Connector, headers: Record<string, string>, body: unknown, receivedAt: string): CanonicalEvent[] {
  const rawBody = Buffer.from(JSON.stringify(body));
  const result = connector.parse(
    { headers, rawBody, contentType: 'application/json', receivedAt: new Date(receivedAt) },
    { source: connector.defaultSource, secrets: [], toleranceSeconds: 300 },
  );
  if (result.kind !== 'events') throw new Error(`expected events, got ${JSON.stringify(result)}`);
  return result.events;
}

/** Stripe's invoice.voided fixture (evt_1EurVoid05) and the invoice.finalized Stripe sent the same second. */
function stripePair(): { voided: CanonicalEvent; finalized: CanonicalEvent } {
  const f = fixture('stripe/invoice-voided-basil-eur.json');
  const body = f.body as { data: { object: Record<string, unknown> } };
  const voided = eventsOf(stripeConnector, f.headers, body, f.receivedAt)[0]!;
  const open = structuredClone(body);
  Object.assign(open, { id: 'evt_1EurFinal04', type: 'invoice.finalized' });
  open.data.object.status = 'open';
  const finalized = eventsOf(stripeConnector, f.headers, open, f.receivedAt)[0]!;
  return { voided, finalized };
}

/** Shopify's orders/cancelled fixture and the orders/paid of the same order at the same updated_at. */
function shopifyPair(): { cancelled: CanonicalEvent; paid: CanonicalEvent } {
  const f = fixture('shopify/orders-cancelled.json');
  const cancelled = eventsOf(shopifyConnector, f.headers, f.body, f.receivedAt)[0]!;
  const paidBody = { ...f.body, cancelled_at: null, cancel_reason: null, financial_status: 'paid' };
  const paid = eventsOf(shopifyConnector, { ...f.headers, 'x-shopify-topic': 'orders/paid', 'x-shopify-event-id': 'another-change' }, paidBody, f.receivedAt)[0]!;
  return { cancelled, paid };
}

describe('same-second events: ordered by the object\'s own state, a void is final', () => {
  const ctx = useRedis();
  let connection: Redis;
  let queues: Record<QueueName, Queue>;
  let producer: Producer;
  let records: RecordStore;
  let keys: Keys;

  beforeEach(async () => {
    connection = createRedis(ctx.url, 'producer');
    await new Promise((resolve) => connection.once('ready', resolve));
    queues = createQueues(connection, ctx.prefix);
    keys = createKeys(ctx.prefix);
    producer = createProducer({
      queues,
      connection,
      keys,
      deadLetters: createDeadLetterStore(queues['dead-letter']),
      trace: { maxEntries: 10, maxAgeMs: 60_000 },
      deliveryTtlMs: 60_000,
      coalesceDelayMs: 0,
    });
    records = createRecordStore(ctx.redis, keys);
  });
  afterEach(async () => {
    await closeQueues(queues);
    await connection.quit();
  });

  it('keeps a Stripe void when invoice.finalized of the same second arrives after it, and counts the stale event', async () => {
    const { voided, finalized } = stripePair();
    expect(finalized.occurred_at).toBe(voided.occurred_at);
    expect((await producer.accept({ events: [voided] })).outcomes).toEqual(['queued']);
    expect((await producer.accept({ events: [finalized] })).outcomes).toEqual(['stale']);
    const state = await records.read(voided.record);
    expect(state.event?.type).toBe('invoice.cancelled');
    expect(Number(await ctx.redis.hget(keys.counters, 'stale_events'))).toBe(1);
  });

  it('drops a non-final state that arrives after a void even when its timestamp is later', async () => {
    const { voided, finalized } = stripePair();
    const later = { ...finalized, id: 'stripe:evt_late', occurred_at: new Date(Date.parse(voided.occurred_at) + 60_000).toISOString() };
    await producer.accept({ events: [voided] });
    expect((await producer.accept({ events: [later] })).outcomes).toEqual(['stale']);
    expect((await records.read(voided.record)).event?.id).toBe(voided.id);
  });

  it('keeps a Shopify cancellation over orders/paid of the same second, whichever arrives first', async () => {
    const { cancelled, paid } = shopifyPair();
    expect(paid.occurred_at).toBe(cancelled.occurred_at);
    // Two states of the same second are two changes: their ids differ, so neither is a duplicate.
    expect(paid.id).not.toBe(cancelled.id);

    expect((await producer.accept({ events: [paid, cancelled] })).outcomes).toEqual(['queued', 'queued']);
    expect((await records.read(cancelled.record)).event?.type).toBe('invoice.cancelled');

    const other = { ...cancelled.record, external_id: 'other-order' };
    const outcomes = await producer.accept({ events: [{ ...cancelled, record: other }, { ...paid, record: other }] });
    expect(outcomes.outcomes).toEqual(['queued', 'stale']);
    expect((await records.read(other)).event?.type).toBe('invoice.cancelled');
  });

  it('orders WooCommerce states of the same second by status (a cancellation after completion) and tells them apart', async () => {
    const f = fixture('woocommerce/order-created-coupon-fee-shipping.json');
    const headers = { ...f.headers, 'x-wc-webhook-topic': 'order.updated' };
    const completed = eventsOf(wooConnector, headers, { ...f.body, status: 'completed' }, f.receivedAt)[0]!;
    const cancelled = eventsOf(wooConnector, headers, { ...f.body, status: 'cancelled' }, f.receivedAt)[0]!;
    expect(cancelled.id).not.toBe(completed.id);
    expect((await producer.accept({ events: [cancelled, completed] })).outcomes).toEqual(['queued', 'stale']);
    expect((await records.read(cancelled.record)).event?.data).toMatchObject({ status: 'cancelled' });
  });
});
