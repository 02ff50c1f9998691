import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { shopifyConnector } from '../../../src/connectors/shopify/index.js';
import { runOrdersBackfill } from '../../../src/backfill/run.js';
import { createShopifyLister } from '../../../src/backfill/shopify.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { backfillDeps, closeServer, listenLocal } from '../../helpers/backfill-fake.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19, catch-up after an outage, Shopify: taxsync was down from 08:30 to 14:30 UTC on
 * 2026-11-20 and received only the orders/updated webhook of the TWD order. A local fake of the
 * Admin REST API's `GET /admin/api/2025-10/orders.json` answers with the orders of the real-shaped
 * fixtures in test/fixtures/connectors/shopify, each carrying its refunds (`refunds`, as the REST
 * order resource does: the refunds/create fixtures of the same orders), filtered by
 * updated_at_min, one order a page with a real `Link` header (`rel="next"`/`rel="previous"` with
 * page_info), `X-Shopify-Shop-Api-Call-Limit`, and a 429 with `Retry-After` on the first call.
 * The backfill queues exactly the gift-card order and the two refunds taxsync missed (the HKD
 * order of 2025 is outside the window), and a second run queues nothing.
 */

type Fixture = { headers: Record<string, string>; body: Record<string, unknown> };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/connectors/shopify/${name}`, import.meta.url), 'utf8')) as Fixture;

const TWD = fixture('real-orders-updated-taxes-included-twd.json');
const TWD_REFUND = fixture('real-refunds-create-taxes-included-twd.json').body;
const GIFT = fixture('real-orders-create-gift-card-donation-discount.json').body;
const GIFT_REFUND = fixture('real-refunds-create-shipping-only.json').body;
const HKD = fixture('real-orders-paid-exempt-customer-discounts-hkd.json').body;
const ORDERS: Record<string, unknown>[] = [
  { ...HKD, refunds: [] },
  { ...TWD.body, refunds: [TWD_REFUND] },
  // The shipping refund came a day later: the order's updated_at moved with it.
  { ...GIFT, updated_at: '2026-11-21T09:01:05-05:00', refunds: [GIFT_REFUND] },
];
const OUTAGE_START = new Date('2026-11-20T08:30:00Z');
const VERSION_PATH = '/admin/api/2025-10';

describe('taxsync backfill --source shopify (fake Admin REST API, real Redis)', () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let server: Server;
  let url: string;
  let calls: string[];
  let failSecondPageOnce: boolean;
  let rateLimitedOnce: boolean;
  let sleeps: number[];

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    calls = [];
    sleeps = [];
    failSecondPageOnce = false;
    rateLimitedOnce = true;
    let used = 30;
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      calls.push(`${u.pathname}?${u.searchParams.toString()}`);
      if (req.headers['x-shopify-access-token'] !== 'shpat_backfill') {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' }));
        return;
      }
      if (u.pathname !== `${VERSION_PATH}/orders.json`) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: 'Not Found' }));
        return;
      }
      if (rateLimitedOnce) {
        rateLimitedOnce = false;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2.0' }).end(JSON.stringify({ errors: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.' }));
        return;
      }
      // page_info is opaque to clients; here it encodes the window and the position.
      const pageInfo = u.searchParams.get('page_info');
      const cursor = pageInfo === null ? { min: u.searchParams.get('updated_at_min') ?? '', at: 0 } : (JSON.parse(Buffer.from(pageInfo, 'base64url').toString()) as { min: string; at: number });
      if (pageInfo === null && u.searchParams.get('status') !== 'any') {
        res.writeHead(400).end();
        return;
      }
      if (cursor.at === 1 && failSecondPageOnce) {
        failSecondPageOnce = false;
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: 'Internal Server Error' }));
        return;
      }
      const listed = ORDERS.filter((o) => new Date(String(o.updated_at)) >= new Date(cursor.min));
      const link = (at: number, rel: string) =>
        `<${url}${VERSION_PATH}/orders.json?limit=250&page_info=${Buffer.from(JSON.stringify({ min: cursor.min, at })).toString('base64url')}>; rel="${rel}"`;
      const links = [cursor.at > 0 ? link(cursor.at - 1, 'previous') : undefined, cursor.at + 1 < listed.length ? link(cursor.at + 1, 'next') : undefined].filter(Boolean);
      used = used === 30 ? 39 : 30;
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-shopify-shop-api-call-limit': `${used}/40`, ...(links.length > 0 && { link: links.join(', ') }) })
        // One order per page, so the paging is exercised.
        .end(JSON.stringify({ orders: listed.slice(cursor.at, cursor.at + 1) }));
    });
    url = await listenLocal(server);
  });
  afterEach(async () => {
    await closeServer(server);
    await pipeline.close();
  });

  const deps = () => backfillDeps(pipeline, 'shopify', createShopifyLister({ apiUrl: `${url}${VERSION_PATH}/`, accessToken: new Secret('shpat_backfill'), sleep: (ms: number) => (sleeps.push(ms), Promise.resolve()) }));

  async function deliverTwdWebhook(): Promise<void> {
    const parsed = shopifyConnector.parse({ rawBody: Buffer.from(JSON.stringify(TWD.body)), headers: TWD.headers } as never, { source: 'shopify' } as never);
    if (parsed.kind !== 'events') throw new Error(`fixture did not map: ${parsed.kind}`);
    await pipeline.producer.accept({ events: parsed.events, delivery: { connector: 'shopify', id: parsed.deliveryId } });
  }

  const seq = async (id: string) => (await pipeline.records.read({ kind: 'transaction', source: 'shopify', external_id: id })).seq;

  it('queues exactly what the six-hour gap missed: an order and two refunds from the orders list', async () => {
    await deliverTwdWebhook();
    const twdSeq = await seq(String(TWD.body.id));
    const summary = await runOrdersBackfill('shopify', deps(), { since: OUTAGE_START });
    // Listed: two orders in the window and their two refunds; the TWD order was delivered.
    expect(summary).toEqual({ listed: 4, queued: 3, known: 1, ignored: 0, invalid: [], resumed_after: null });
    expect(await seq(String(GIFT.id))).toBeGreaterThan(0);
    expect(await seq(`refund-${String(TWD_REFUND.id)}`)).toBeGreaterThan(0);
    expect(await seq(`refund-${String(GIFT_REFUND.id)}`)).toBeGreaterThan(0);
    expect(await seq(String(TWD.body.id))).toBe(twdSeq);
    expect(await seq(String(HKD.id))).toBe(0);
    expect(calls[0]).toBe(`${VERSION_PATH}/orders.json?limit=250&status=any&updated_at_min=2026-11-20T08%3A30%3A00.000Z`);
    expect(calls.some((c) => /^\/admin\/api\/2025-10\/orders\.json\?limit=250&page_info=[\w-]+$/.test(c))).toBe(true);
    // The 429's Retry-After (2.0 s), then a second before each call after a page that left the bucket at 39/40.
    expect(sleeps[0]).toBe(2000);
    expect(sleeps.slice(1).every((ms) => ms === 1000) && sleeps.length > 1).toBe(true);
    // Run again: everything is known now, nothing is queued twice.
    const again = await runOrdersBackfill('shopify', deps(), { since: OUTAGE_START });
    expect(again).toMatchObject({ listed: 4, queued: 0, known: 4, invalid: [] });
  });

  it('resumes after the last order it stored when the second page fails with a 500', async () => {
    failSecondPageOnce = true;
    await expect(runOrdersBackfill('shopify', deps(), { since: OUTAGE_START })).rejects.toThrow(/500/);
    expect(await seq(String(TWD.body.id))).toBeGreaterThan(0);
    const resumed = await runOrdersBackfill('shopify', deps(), { since: OUTAGE_START });
    expect(resumed.resumed_after).toBe(`orders ${String(TWD.body.id)} -`);
    expect(resumed).toEqual({ listed: 2, queued: 2, known: 0, ignored: 0, invalid: [], resumed_after: `orders ${String(TWD.body.id)} -` });
    expect(await seq(String(GIFT.id))).toBeGreaterThan(0);
    expect(await seq(`refund-${String(GIFT_REFUND.id)}`)).toBeGreaterThan(0);
  });
});
