import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { originalFetchers } from '../../../src/backfill/original.js';
import { loadConnections } from '../../../src/config/connections.js';
import { loadConfig } from '../../../src/config/index.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { shopifyConnector } from '../../../src/connectors/shopify/index.js';
import { stripeConnector } from '../../../src/connectors/stripe/index.js';
import { woocommerceConnector } from '../../../src/connectors/woocommerce/index.js';
import type { Connector } from '../../../src/connectors/types.js';
import { createOriginalFetch } from '../../../src/processors/fetch-original.js';
import { createTransactionHandler } from '../../../src/processors/transaction.js';
import { createRefundLedger } from '../../../src/queue/refund-ledger.js';
import { readTrace } from '../../../src/queue/trace.js';
import { recordKeyString } from '../../../src/domain/record-key.js';
import { useFakeApi } from '../../helpers/api-harness.js';
import { closeServer, listenLocal } from '../../helpers/backfill-fake.js';
import { answerJson, jsonBody } from '../../helpers/fake-api.js';
import { createPipeline, eventually, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19: "The same client fetches a missing original for a waiting refund when credentials are
 * configured." A refund whose original taxsync never received asks the platform for that one
 * original (GET /v1/invoices/:id, GET /admin/api/<ver>/orders/<id>.json, GET
 * /wp-json/wc/v3/orders/<id>; local fakes answering with the real-shaped fixtures the backfill
 * tests use), once, and feeds it through the connector and the webhooks' dedupe: the refund is
 * linked, and the original's webhook arriving afterwards sends nothing twice. A 404 leaves the
 * refund waiting, then dead-lettered as without credentials; without credentials nothing is asked.
 */

type Fixture = { headers: Record<string, string>; receivedAt?: string; body: Record<string, unknown> };
const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../../fixtures/connectors/${path}`, import.meta.url), 'utf8')) as Fixture;

const STRIPE_NOTE = fixture('stripe/real-credit-note-created-basil-two-lines.json');
const STRIPE_INVOICE_EVENT = fixture('stripe/real-invoice-finalized-basil-exempt-discount.json');
const STRIPE_INVOICE = (STRIPE_INVOICE_EVENT.body.data as { object: Record<string, unknown> }).object;
const SHOPIFY_ORDER = fixture('shopify/real-orders-updated-taxes-included-twd.json');
const SHOPIFY_REFUND = fixture('shopify/real-refunds-create-taxes-included-twd.json');
const WOO_ORDER = fixture('woocommerce/real-order-updated-coupon-fee-two-refunds.json');
const VERSION_PATH = '/admin/api/2025-10';

const ENV = (url: string) => ({
  STRIPE_API_KEY: 'rk_test_original',
  STRIPE_API_URL: url,
  SHOPIFY_API_URL: `${url}${VERSION_PATH}`,
  SHOPIFY_ACCESS_TOKEN: 'shpat_original',
  WOOCOMMERCE_API_URL: url,
  WOOCOMMERCE_CONSUMER_KEY: 'ck_original',
  WOOCOMMERCE_CONSUMER_SECRET: 'cs_original',
});

describe('a waiting refund fetches its missing original from the platform', () => {
  const redis = useRedis();
  const tax = useFakeApi();
  let pipeline: Pipeline;
  let platform: Server;
  let platformUrl: string;
  /** What the platform fakes were asked: `GET <path>`. */
  let calls: string[];
  /** What each platform holds, by id (absent: 404). */
  let held: { invoices: Map<string, unknown>; shopify: Map<string, unknown>; woo: Map<string, unknown> };
  let stored: Map<string, Record<string, unknown>>;
  let puts: string[];
  /** Retry-After seconds of the 429s the platform answers first, one per call. */
  let rateLimits: string[];
  let sleeps: number[];

  beforeEach(async () => {
    stored = new Map();
    puts = [];
    tax.api.on('PUT /v1/transactions/', (req, res) => {
      const body = jsonBody(req) as { external_id: string };
      puts.push(body.external_id);
      const record = { ...body, id: stored.get(body.external_id)?.id ?? `tx-${stored.size + 1}` };
      stored.set(body.external_id, record);
      answerJson(res, 201, record);
    });
    tax.api.on('PUT /v1/customers/', (req, res) => answerJson(res, 200, { ...(jsonBody(req) as object), id: 'cu-1' }));
    tax.api.fallback((req, res) => {
      const found = /^\/v1\/transactions\/[a-z]+\/(.+)$/.exec(req.path);
      const record = found && req.method === 'GET' ? stored.get(decodeURIComponent(found[1]!)) : undefined;
      answerJson(res, record ? 200 : 404, record ?? { detail: 'Not found.' });
    });

    calls = [];
    rateLimits = [];
    sleeps = [];
    held = { invoices: new Map([[String(STRIPE_INVOICE.id), STRIPE_INVOICE]]), shopify: new Map(), woo: new Map() };
    platform = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      calls.push(`GET ${path}`);
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const retryAfter = rateLimits.shift();
      if (retryAfter !== undefined) return res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end('{"error":{"type":"rate_limit_error"}}');
      let match: RegExpExecArray | null;
      if ((match = /^\/v1\/invoices\/([^/]+)$/.exec(path))) {
        if (req.headers.authorization !== 'Bearer rk_test_original') return json(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
        const invoice = held.invoices.get(decodeURIComponent(match[1]!));
        return invoice
          ? json(200, invoice)
          : json(404, { error: { code: 'resource_missing', message: `No such invoice: '${match[1]}'`, param: 'id', type: 'invalid_request_error' } });
      }
      if ((match = /^\/admin\/api\/2025-10\/orders\/([^/]+)\.json$/.exec(path))) {
        if (req.headers['x-shopify-access-token'] !== 'shpat_original') return json(401, { errors: '[API] Invalid API key or access token' });
        if (match[1] === 'broken') return json(500, { errors: 'Internal Server Error' });
        const order = held.shopify.get(match[1]!);
        return order ? json(200, { order }) : json(404, { errors: 'Not Found' });
      }
      if ((match = /^\/wp-json\/wc\/v3\/orders\/([^/]+)$/.exec(path))) {
        if (req.headers.authorization !== `Basic ${Buffer.from('ck_original:cs_original').toString('base64')}`) return json(401, { code: 'woocommerce_rest_cannot_view', data: { status: 401 } });
        const order = held.woo.get(match[1]!);
        return order ? json(200, order) : json(404, { code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', data: { status: 404 } });
      }
      json(404, {});
    });
    platformUrl = await listenLocal(platform);
  });
  afterEach(async () => {
    await pipeline.close();
    await closeServer(platform);
  });

  /** The transactions worker as `taxsync work` builds it, with the platforms `env` configures. */
  async function start(env: Record<string, string>, refundWaitMs = 60_000): Promise<void> {
    pipeline = await createPipeline(redis.url, redis.prefix, { wait: { deadlineMs: 60_000, refundDeadlineMs: refundWaitMs, baseMs: 50, capMs: 200 } });
    const config = loadConfig(env);
    const fetchers = originalFetchers(loadConnections(config, DEFAULT_SETTINGS, env).list, { timeoutMs: 5_000, rateLimitRetries: 1, maxRetryWaitMs: 5_000, sleep: (ms) => (sleeps.push(ms), Promise.resolve()) });
    const fetchOriginal = createOriginalFetch({ fetchers, redis: pipeline.producerConnection, keys: pipeline.keys, producer: pipeline.producer, markerTtlMs: 2 * refundWaitMs });
    await pipeline.startWorker(
      'transactions',
      createTransactionHandler({
        tax: tax.connect().tax,
        records: pipeline.records,
        ledger: createRefundLedger(pipeline.producerConnection, pipeline.keys),
        settings: DEFAULT_SETTINGS.mapping,
        writers: pipeline.writers,
        fetchOriginal,
      }),
    );
  }

  /** A webhook delivery through its connector and the producer, as the webhook route accepts it. */
  async function deliver(connector: Connector, f: Fixture, only?: (external_id: string) => boolean): Promise<void> {
    const req = { rawBody: Buffer.from(JSON.stringify(f.body)), headers: f.headers, receivedAt: new Date(f.receivedAt ?? Date.now()) };
    const parsed = connector.parse(req as never, { source: connector.id } as never);
    if (parsed.kind !== 'events') throw new Error(`fixture did not map: ${parsed.kind}`);
    const events = only ? parsed.events.filter((e) => only(e.record.external_id)) : parsed.events;
    await pipeline.producer.accept({ events, delivery: { connector: connector.id, id: parsed.deliveryId } });
  }

  const state = (source: string, external_id: string) => pipeline.records.read({ kind: 'transaction', source, external_id });
  const applied = async (source: string, external_id: string) => {
    const s = await state(source, external_id);
    return s.seq > 0 && s.appliedSeq === s.seq;
  };
  const STRIPE_REFUND = `refund-${String(STRIPE_NOTE.body.data && (STRIPE_NOTE.body.data as { object: { id: string } }).object.id)}`;
  const STRIPE_INVOICE_ID = String(STRIPE_INVOICE.id);

  it('links a Stripe credit note after fetching its invoice once; the invoice webhook arriving afterwards sends no second transaction', async () => {
    await start(ENV(platformUrl));
    await deliver(stripeConnector, STRIPE_NOTE);
    await eventually(() => stored.has(STRIPE_REFUND));

    expect(calls).toEqual([`GET /v1/invoices/${STRIPE_INVOICE_ID}`]);
    expect(stored.get(STRIPE_REFUND)).toMatchObject({ transaction_type: 'refund', created_from: stored.get(STRIPE_INVOICE_ID)!.id, refund_info: { is_refund_linked: true } });
    const trace = await readTrace(pipeline.producerConnection, pipeline.keys, recordKeyString({ kind: 'transaction', source: 'stripe', external_id: STRIPE_REFUND }));
    expect(JSON.stringify(trace)).toContain('fetched from stripe (queued)');

    // The invoice's own webhook comes late: it changes nothing the engine holds.
    await deliver(stripeConnector, STRIPE_INVOICE_EVENT);
    await eventually(() => applied('stripe', STRIPE_INVOICE_ID));
    expect(puts.filter((id) => id === STRIPE_INVOICE_ID)).toHaveLength(1);
    expect(calls).toHaveLength(1);
  });

  it('a 404 from the platform leaves the refund waiting, asked once, then dead-lettered REFUND_ORIGINAL_MISSING saying so', async () => {
    held.invoices.clear();
    await start(ENV(platformUrl), 1_500);
    await deliver(stripeConnector, STRIPE_NOTE);
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);

    const [entry] = await pipeline.deadLetters.list();
    expect(entry!.error.code).toBe('REFUND_ORIGINAL_MISSING');
    expect(entry!.error.message).toContain(`waiting for its original stripe/${STRIPE_INVOICE_ID}`);
    expect(entry!.error.message).toContain('stripe was asked for it: the platform has no such original (404) (ORIGINAL_NOT_ON_PLATFORM)');
    // Many re-checks, one call.
    expect(calls).toEqual([`GET /v1/invoices/${STRIPE_INVOICE_ID}`]);
    expect(puts).toEqual([]);
  });

  it('without platform credentials nothing is asked, and the refund waits and is dead-lettered as before', async () => {
    await start({ STRIPE_API_URL: platformUrl }, 1_000);
    await deliver(stripeConnector, STRIPE_NOTE);
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry!.error.code).toBe('REFUND_ORIGINAL_MISSING');
    expect(entry!.error.message).not.toContain('asked');
    expect(calls).toEqual([]);
  });

  it('links a Shopify refund after fetching its order; the order webhook arriving afterwards is a duplicate, not a second version', async () => {
    const orderId = String(SHOPIFY_ORDER.body.id);
    held.shopify.set(orderId, { ...SHOPIFY_ORDER.body, refunds: [SHOPIFY_REFUND.body] });
    await start(ENV(platformUrl));
    await deliver(shopifyConnector, SHOPIFY_REFUND);
    const refundId = `refund-${String(SHOPIFY_REFUND.body.id)}`;
    await eventually(() => stored.has(refundId));

    expect(calls).toEqual([`GET ${VERSION_PATH}/orders/${orderId}.json`]);
    expect(stored.get(refundId)).toMatchObject({ transaction_type: 'refund', created_from: stored.get(orderId)!.id });
    await eventually(() => applied('shopify', orderId));
    const seq = (await state('shopify', orderId)).seq;
    await deliver(shopifyConnector, SHOPIFY_ORDER);
    expect((await state('shopify', orderId)).seq).toBe(seq);
    expect(puts.filter((id) => id === orderId)).toHaveLength(1);
  });

  it('links a WooCommerce refund after fetching its order', async () => {
    held.woo.set(String(WOO_ORDER.body.id), WOO_ORDER.body);
    await start(ENV(platformUrl));
    // Only the refunds of the delivery reach taxsync: the order's own event is what went missing.
    await deliver(woocommerceConnector, WOO_ORDER, (id) => id.startsWith('refund-'));
    await eventually(() => [...stored.keys()].filter((id) => id.startsWith('refund-')).length === 2);

    expect(calls).toEqual(['GET /wp-json/wc/v3/orders/727']);
    for (const [id, body] of stored) if (id.startsWith('refund-')) expect(body).toMatchObject({ transaction_type: 'refund', created_from: stored.get('727')!.id });
  });

  it('a failed fetch (a 500) is named with its code in the wait and never fails the refund by itself', async () => {
    await start(ENV(platformUrl), 1_000);
    await deliver(shopifyConnector, { ...SHOPIFY_REFUND, body: { ...SHOPIFY_REFUND.body, order_id: 'broken' } });
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry!.error.code).toBe('REFUND_ORIGINAL_MISSING');
    expect(entry!.error.message).toContain('shopify was asked for it: the fetch failed: Shopify answered 500 to GET /admin/api/2025-10/orders/broken.json (ORIGINAL_FETCH_FAILED)');
    expect(calls).toEqual([`GET ${VERSION_PATH}/orders/broken.json`]);
  });

  it('waits out a 429 asking 2 s once', async () => {
    rateLimits = ['2'];
    await start(ENV(platformUrl));
    await deliver(stripeConnector, STRIPE_NOTE);
    await eventually(() => stored.has(STRIPE_REFUND));
    expect(sleeps).toEqual([2000]);
    expect(calls).toHaveLength(2);
  });

  it('a 429 asking 60 s is a failed fetch, not a 60 s job', async () => {
    rateLimits = ['60'];
    await start(ENV(platformUrl), 1_000);
    await deliver(stripeConnector, STRIPE_NOTE);
    await eventually(async () => (await pipeline.deadLetters.count()) === 1);
    const [entry] = await pipeline.deadLetters.list();
    expect(entry!.error.message).toContain('the fetch failed: Stripe answered 429 to GET /v1/invoices/in_1BasilExempt01 (ORIGINAL_FETCH_FAILED)');
    expect(sleeps).toEqual([]);
    expect(calls).toHaveLength(1);
  });
});
