import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stripeConnector } from '../../../src/connectors/stripe/index.js';
import { buildCli, runCli } from '../../helpers/cli.js';
import { closeServer, listenLocal } from '../../helpers/backfill-fake.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Issue 19, the six-hour gap through the command itself: `taxsync backfill --source stripe` reads
 * STRIPE_API_KEY and STRIPE_API_URL (declared by the Stripe connector's config.ts) from its
 * environment, lists a local fake of Stripe's list endpoints, and queues exactly the objects the
 * gap missed; without the key it refuses, naming the variable, and calls nothing.
 */

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/connectors/stripe/${name}`, import.meta.url), 'utf8')) as { body: { data: { object: Record<string, unknown> } } };

const DELIVERED = fixture('real-invoice-paid-acacia-prorations.json');
const MISSED = [fixture('real-invoice-finalized-basil-reverse-charge.json'), fixture('real-invoice-paid-basil-trial.json')];
const NOTE = fixture('real-credit-note-created-basil-two-lines.json');

describe('taxsync backfill (the command, a fake Stripe, real Redis)', () => {
  const ctx = useRedis();
  let main: string;
  let pipeline: Pipeline;
  let stripe: Server;
  let url: string;
  let calls: string[];

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);
  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    calls = [];
    stripe = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      calls.push(u.pathname);
      if (req.headers.authorization !== 'Bearer rk_test_command') return void res.writeHead(401).end();
      const data = u.pathname === '/v1/invoices' ? [DELIVERED, ...MISSED].map((f) => f.body.data.object) : u.pathname === '/v1/credit_notes' ? [NOTE.body.data.object] : [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', url: u.pathname, has_more: false, data }));
    });
    url = await listenLocal(stripe);
  });
  afterEach(async () => {
    await closeServer(stripe);
    await pipeline.close();
  });

  const backfill = (env: Record<string, string>) =>
    runCli(main, ['backfill', '--source', 'stripe', '--since', '2026-11-20T08:30:00Z', '--json'], { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error', ...env });

  it('queues exactly what the gap missed, with the credentials from the environment', async () => {
    const parsed = stripeConnector.parse({ rawBody: Buffer.from(JSON.stringify(DELIVERED.body)), headers: {} } as never, { source: 'stripe' } as never);
    if (parsed.kind !== 'events') throw new Error('fixture did not map');
    await pipeline.producer.accept({ events: parsed.events, delivery: { connector: 'stripe', id: parsed.deliveryId } });

    const run = await backfill({ STRIPE_API_KEY: 'rk_test_command', STRIPE_API_URL: url });
    expect(run.code, run.output).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ listed: 4, queued: 3, known: 1, ignored: 0, invalid: [], resumed_after: null });
    for (const id of [...MISSED.map((f) => String(f.body.data.object.id)), `refund-${String(NOTE.body.data.object.id)}`]) {
      expect((await pipeline.records.read({ kind: 'transaction', source: 'stripe', external_id: id })).seq, id).toBeGreaterThan(0);
    }
    expect(run.output).not.toContain('rk_test_command');
  }, 60_000);

  it('refuses without STRIPE_API_KEY, naming it, and calls nothing', async () => {
    const run = await backfill({ STRIPE_API_URL: url });
    expect(run.code).not.toBe(0);
    expect(run.output).toContain('STRIPE_API_KEY is not set');
    expect(calls).toEqual([]);
  }, 60_000);
});
