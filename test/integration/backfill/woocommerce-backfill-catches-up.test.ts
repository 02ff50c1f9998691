import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { wooRefundExternalId } from '../../../src/connectors/woocommerce/map.js';
import { woocommerceConnector } from '../../../src/connectors/woocommerce/index.js';
import { runOrdersBackfill } from '../../../src/backfill/run.js';
import { createWooLister } from '../../../src/backfill/woocommerce.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { backfillDeps, closeServer, listenLocal } from '../../helpers/backfill-fake.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19, catch-up after an outage, WooCommerce: taxsync was down for the six hours before order
 * 727 was completed and refunded twice (2017-03-24T10:15:00, the real-shaped fixtures of
 * test/fixtures/connectors/woocommerce), and had received only its order.created webhook and the
 * webhook of order 4321. A local fake of `GET /wp-json/wc/v3/orders` (basic auth, a JSON array,
 * `X-WP-Total` / `X-WP-TotalPages`, page by number, one order a page, orders modified after
 * `modified_after` in GMT) lists 727's latest state, 4321 and 4400. The backfill queues exactly 727
 * (its new state and both refunds) and 4400; 4321 is known; a second run queues nothing.
 */

type Fixture = { headers: Record<string, string>; receivedAt: string; body: Record<string, unknown> };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/connectors/woocommerce/${name}`, import.meta.url), 'utf8')) as Fixture;

const CREATED_727 = fixture('real-order-created-guest-billing-only.json');
const COMPLETED_727 = fixture('real-order-updated-coupon-fee-two-refunds.json').body;
const ORDER_4321 = fixture('order-created-coupon-fee-shipping.json');
const ORDER_4400 = fixture('order-updated-tax-inclusive-guest-refund.json').body;
const ORDERS = [COMPLETED_727, ORDER_4321.body, ORDER_4400];
const OUTAGE_START = new Date('2017-03-24T04:15:00Z');

describe('taxsync backfill --source woocommerce (fake WC REST API, real Redis)', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let server: Server;
  let url: string;
  let calls: string[];
  let failSecondPageOnce: boolean;
  let rateLimitedOnce: boolean;

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    calls = [];
    failSecondPageOnce = false;
    rateLimitedOnce = false;
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      calls.push(`${u.pathname}?${u.searchParams.toString()}`);
      if (req.headers.authorization !== `Basic ${Buffer.from('ck_backfill:cs_backfill').toString('base64')}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', data: { status: 401 } }));
        return;
      }
      if (u.pathname !== '/wp-json/wc/v3/orders' || u.searchParams.get('dates_are_gmt') !== 'true') {
        res.writeHead(404).end();
        return;
      }
      if (rateLimitedOnce) {
        // WooCommerce itself sends no rate-limit headers; a host in front of it may answer 429.
        rateLimitedOnce = false;
        res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '3' }).end('<html><body>Too Many Requests</body></html>');
        return;
      }
      const after = `${u.searchParams.get('modified_after') ?? ''}Z`;
      const listed = ORDERS.filter((o) => new Date(`${String(o.date_modified_gmt)}Z`) > new Date(after));
      const perPage = 1; // one order a page, so the paging is exercised (the client asks for 100)
      const page = Number(u.searchParams.get('page') ?? '1');
      if (page === 2 && failSecondPageOnce) {
        failSecondPageOnce = false;
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'internal_server_error', message: 'There has been a critical error on this website.', data: { status: 500 } }));
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'x-wp-total': String(listed.length), 'x-wp-totalpages': String(Math.ceil(listed.length / perPage)) })
        .end(JSON.stringify(listed.slice((page - 1) * perPage, page * perPage)));
    });
    url = await listenLocal(server);
  });
  afterEach(async () => {
    await closeServer(server);
    await pipeline.close();
  });

  const deps = () => backfillDeps(pipeline, 'woocommerce', createWooLister({ apiUrl: url, consumerKey: new Secret('ck_backfill'), consumerSecret: new Secret('cs_backfill'), sleep: () => Promise.resolve() }));

  async function deliver(f: Fixture): Promise<void> {
    const parsed = woocommerceConnector.parse({ rawBody: Buffer.from(JSON.stringify(f.body)), headers: f.headers, receivedAt: new Date(f.receivedAt) } as never, { source: 'woocommerce' } as never);
    if (parsed.kind !== 'events') throw new Error(`fixture did not map: ${parsed.kind}`);
    await pipeline.producer.accept({ events: parsed.events, delivery: { connector: 'woocommerce', id: parsed.deliveryId } });
  }
  const read = (id: string) => pipeline.records.read({ kind: 'transaction', source: 'woocommerce', external_id: id });

  it('queues exactly what the six-hour gap missed, and nothing on a second run', async () => {
    await deliver(CREATED_727);
    await deliver(ORDER_4321);
    const seq4321 = (await read('4321')).seq;
    const summary = await runOrdersBackfill('woocommerce', deps(), { since: OUTAGE_START });
    expect(summary).toEqual({ listed: 3, queued: 2, known: 1, ignored: 0, invalid: [], resumed_after: null });
    expect((await read('727')).event?.data).toMatchObject({ status: 'paid' });
    const refunds = (COMPLETED_727.refunds as { id: number }[]).map((r) => r.id);
    expect(refunds).toHaveLength(2);
    for (const id of refunds) expect((await read(wooRefundExternalId("727", String(id)))).seq).toBeGreaterThan(0);
    expect((await read('4400')).seq).toBeGreaterThan(0);
    expect((await read('4321')).seq).toBe(seq4321);
    expect(calls[0]).toBe('/wp-json/wc/v3/orders?modified_after=2017-03-24T04%3A15%3A00&dates_are_gmt=true&orderby=id&order=asc&per_page=100&page=1');
    expect(calls.filter((c) => c.endsWith('&page=3'))).toHaveLength(1);
    const again = await runOrdersBackfill('woocommerce', deps(), { since: OUTAGE_START });
    expect(again).toMatchObject({ listed: 3, queued: 0, known: 3, invalid: [] });
  });

  it('resumes after the last order it stored when the second page fails with a 500', async () => {
    failSecondPageOnce = true;
    await expect(runOrdersBackfill('woocommerce', deps(), { since: OUTAGE_START })).rejects.toThrow(/500/);
    const resumed = await runOrdersBackfill('woocommerce', deps(), { since: OUTAGE_START });
    expect(resumed).toEqual({ listed: 2, queued: 2, known: 0, ignored: 0, invalid: [], resumed_after: 'orders 727 -' });
    for (const id of ['727', '4321', '4400']) expect((await read(id)).seq).toBeGreaterThan(0);
  });

  it('pauses WOOCOMMERCE_API_PAGE_PAUSE_MS between pages (none before the first) and waits out a 429 by its Retry-After', async () => {
    rateLimitedOnce = true;
    const sleeps: number[] = [];
    const lister = createWooLister({ apiUrl: url, consumerKey: new Secret('ck_backfill'), consumerSecret: new Secret('cs_backfill'), pagePauseMs: 750, sleep: (ms) => (sleeps.push(ms), Promise.resolve()) });
    const summary = await runOrdersBackfill('woocommerce', backfillDeps(pipeline, 'woocommerce', lister), { since: OUTAGE_START });
    expect(summary).toMatchObject({ listed: 3, queued: 3 });
    // The 429's 3 s, then a pause before pages 2 and 3.
    expect(sleeps).toEqual([3000, 750, 750]);
    expect(calls).toHaveLength(4);
  });
});
