import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { stripeConnector } from '../../../src/connectors/stripe/index.js';
import { runStripeBackfill } from '../../../src/backfill/run.js';
import { createStripeLister } from '../../../src/backfill/stripe.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { backfillDeps, closeServer, listenLocal } from '../../helpers/backfill-fake.js';
import { useRedis } from '../../helpers/redis.js';
import { readTrace } from '../../../src/queue/trace.js';

/**
 * Catch-up after an outage: taxsync was down for six hours and received only the webhook
 * of the first invoice. A local fake of Stripe's list endpoints (`GET /v1/invoices`,
 * `GET /v1/credit_notes`: list objects with has_more, paged by starting_after, one object per page
 * here, a 429 with Retry-After on the first call) answers with the objects of the real-shaped
 * fixtures in test/fixtures/connectors/stripe (each file names its origin). The backfill queues
 * exactly the two invoices and the credit note taxsync missed, through the Stripe connector and the
 * webhooks' dedupe, and resumes from its checkpoint after an interruption.
 */

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/connectors/stripe/${name}`, import.meta.url), 'utf8')) as { body: { data: { object: Record<string, unknown> } } };

const DELIVERED = fixture('real-invoice-paid-acacia-prorations.json');
const MISSED = [fixture('real-invoice-finalized-basil-reverse-charge.json'), fixture('real-invoice-paid-basil-trial.json')];
const CREDIT_NOTE = fixture('real-credit-note-created-basil-two-lines.json');
const INVOICES = [DELIVERED, ...MISSED].map((f) => f.body.data.object);
const NOTES = [CREDIT_NOTE.body.data.object];

describe('taxsync backfill --source stripe (fake Stripe list endpoints, real Redis)', () => {
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
    rateLimitedOnce = true;
    server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      calls.push(`${u.pathname}?${u.searchParams.toString()}`);
      if (req.headers.authorization !== 'Bearer sk_test_backfill') {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }));
        return;
      }
      if (rateLimitedOnce) {
        rateLimitedOnce = false;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ error: { type: 'rate_limit_error', message: 'Too many requests' } }));
        return;
      }
      const all = u.pathname === '/v1/invoices' ? INVOICES : u.pathname === '/v1/credit_notes' ? NOTES : undefined;
      if (!all) {
        res.writeHead(404).end();
        return;
      }
      const gte = Number(u.searchParams.get('created[gte]') ?? 0);
      const listed = all.filter((o) => Number(o.created) >= gte);
      const after = u.searchParams.get('starting_after');
      const start = after === null ? 0 : listed.findIndex((o) => o.id === after) + 1;
      if (start === 1 && u.pathname === '/v1/invoices' && failSecondPageOnce) {
        failSecondPageOnce = false;
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'api_error' } }));
        return;
      }
      // One object per page, so the paging is exercised.
      const data = listed.slice(start, start + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', url: u.pathname, has_more: start + 1 < listed.length, data }));
    });
    url = await listenLocal(server);
  });
  afterEach(async () => {
    await closeServer(server);
    await pipeline.close();
  });

  let sleeps: number[] = [];
  beforeEach(() => {
    sleeps = [];
  });
  const deps = () => backfillDeps(pipeline, 'stripe', createStripeLister({ baseUrl: url, apiKey: new Secret('sk_test_backfill'), sleep: (ms: number) => (sleeps.push(ms), Promise.resolve()) }));

  async function deliverFirstWebhook(): Promise<void> {
    const parsed = stripeConnector.parse({ rawBody: Buffer.from(JSON.stringify(DELIVERED.body)), headers: {} } as never, { source: 'stripe' } as never);
    if (parsed.kind !== 'events') throw new Error(`fixture did not map: ${parsed.kind}`);
    await pipeline.producer.accept({ events: parsed.events, delivery: { connector: 'stripe', id: parsed.deliveryId } });
  }

  const held = async (id: string) => (await pipeline.records.read({ kind: 'transaction', source: 'stripe', external_id: id })).seq > 0;

  it('queues exactly what the six-hour gap missed, after waiting out a 429', async () => {
    await deliverFirstWebhook();
    const summary = await runStripeBackfill(deps(), { since: new Date(0) });
    expect(summary).toMatchObject({ listed: 4, queued: 3, known: 1, ignored: 0, invalid: [], resumed_after: null });
    for (const f of MISSED) expect(await held(String(f.body.data.object.id))).toBe(true);
    expect(await held(`refund-${String(CREDIT_NOTE.body.data.object.id)}`)).toBe(true);
    expect(sleeps).toEqual([1000]);
    expect(calls.filter((c) => c.startsWith('/v1/invoices')).some((c) => c.includes('starting_after='))).toBe(true);
    // Run again: everything is known now, nothing is queued twice.
    const again = await runStripeBackfill(deps(), { since: new Date(0) });
    expect(again).toMatchObject({ listed: 4, queued: 0, known: 4 });
  });

  it('counts the invoices delivered by webhook as known, although the backfill cannot know their event ids, and traces that it found them held', async () => {
    rateLimitedOnce = false;
    // The webhooks as Stripe sends them: a real event id of their own, created when the invoice
    // reached its state (its paid_at or finalized_at): the same instant the backfill reads off the object.
    for (const object of INVOICES.slice(0, 2)) {
      const t = object.status_transitions as { paid_at?: number | null; finalized_at?: number | null };
      const created = Math.max(Number(object.created), Number(t.finalized_at ?? 0), Number(t.paid_at ?? 0));
      const type = object.status === 'paid' ? 'invoice.paid' : 'invoice.finalized';
      const body = { id: `evt_webhook_${String(object.id)}`, object: 'event', type, created, data: { object } };
      const parsed = stripeConnector.parse({ rawBody: Buffer.from(JSON.stringify(body)), headers: {} } as never, { source: 'stripe' } as never);
      if (parsed.kind !== 'events') throw new Error(`the webhook did not map: ${parsed.kind}`);
      await pipeline.producer.accept({ events: parsed.events, delivery: { connector: 'stripe', id: parsed.deliveryId } });
    }
    const summary = await runStripeBackfill(deps(), { since: new Date(0) });
    expect(summary).toMatchObject({ listed: 4, queued: 2, known: 2, ignored: 0, invalid: [] });
    const first = String(INVOICES[0]!.id);
    const seq = async (id: string) => Number(await ctx.redis.hget(pipeline.keys.state(`transaction|stripe|${id}`), 'seq'));
    expect(await seq(first)).toBe(1);
    const trace = await readTrace(ctx.redis, pipeline.keys, `transaction|stripe|${first}`);
    expect(trace.map((e) => e.detail)).toContain('backfill found this version already held; not queued again');
    const again = await runStripeBackfill(deps(), { since: new Date(0) });
    expect(again).toMatchObject({ listed: 4, queued: 0, known: 4 });
    expect(await seq(first)).toBe(1);
  });

  it('resumes after the last object it stored when interrupted', async () => {
    failSecondPageOnce = true;
    await expect(runStripeBackfill(deps(), { since: new Date(0) })).rejects.toThrow(/500/);
    const resumed = await runStripeBackfill(deps(), { since: new Date(0) });
    expect(resumed.resumed_after).toBe(`invoices ${String(INVOICES[0]!.id)}`);
    expect(resumed).toMatchObject({ listed: 3, queued: 3 });
    for (const o of INVOICES) expect(await held(String(o.id))).toBe(true);
  });
});
