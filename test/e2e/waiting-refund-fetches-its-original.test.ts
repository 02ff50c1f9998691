import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, fixture, type Daemon } from '../helpers/daemon.js';
import { closeServer, listenLocal } from '../helpers/backfill-fake.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

/**
 * The daemon as `taxsync start` runs it, with STRIPE_API_KEY set: a credit note whose invoice
 * taxsync never received is linked after the workers fetch the invoice from (a local fake of)
 * Stripe's `GET /v1/invoices/:id`.
 */
describe('the daemon fetches a waiting refund\'s original with the platform credentials it is given', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;
  let stripe: Server | undefined;
  afterEach(async () => {
    await daemon?.stop();
    if (stripe) await closeServer(stripe);
  });

  it('links a Stripe credit note whose invoice only Stripe had', async () => {
    const note = fixture('stripe/real-credit-note-created-basil-two-lines.json');
    const invoice = (fixture('stripe/real-invoice-finalized-basil-exempt-discount.json').body as { data: { object: { id: string } } }).data.object;
    const calls: string[] = [];
    stripe = createServer((req, res) => {
      calls.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      const found = req.url === `/v1/invoices/${invoice.id}` && req.headers.authorization === 'Bearer rk_test_e2e';
      res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(found ? invoice : { error: { code: 'resource_missing' } }));
    });
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: { STRIPE_API_KEY: 'rk_test_e2e', STRIPE_API_URL: await listenLocal(stripe) } });

    const res = await daemon.post('stripe', note.body, note.headers, note.contentType);
    expect(res.status).toBe(202);
    const refundId = `refund-${(note.body as { data: { object: { id: string } } }).data.object.id}`;
    await eventually(async () => {
      try {
        return (await daemon!.api.tax.transactions.getByKey('stripe', refundId)).transaction_type === 'refund';
      } catch {
        return false;
      }
    }, 30_000);
    const original = await daemon.api.tax.transactions.getByKey('stripe', invoice.id);
    expect((await daemon.api.tax.transactions.getByKey('stripe', refundId)).created_from).toBe(original.id);
    expect(calls).toEqual([`GET /v1/invoices/${invoice.id} Bearer rk_test_e2e`]);
  });
});
