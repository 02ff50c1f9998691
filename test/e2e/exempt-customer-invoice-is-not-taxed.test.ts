import { Decimal } from 'decimal.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, startDaemon, type Daemon } from '../helpers/daemon.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

/**
 * Issue 14, item 5: a customer's tax facts on an invoice (Stripe customer_tax_exempt) reach
 * PUT /v1/customers/ before the PUT /v1/transactions/ that relies on them, so the emulator does
 * not tax an exempt customer's invoice. Webhooks → daemon → emulator, with real payloads.
 */
describe('an exempt customer’s invoice, through webhooks to the emulator', () => {
  const ctx = useRedis();
  let daemon: Daemon;

  beforeEach(async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix);
  });
  afterEach(async () => {
    await daemon.stop();
  });

  const byKey = async (id: string) => {
    try {
      return await daemon.api.tax.transactions.getByKey('stripe', id);
    } catch {
      return undefined;
    }
  };

  it('upserts the exempt customer first and the engine computes no tax on its invoice, while a taxable customer in California is taxed', async () => {
    const exempt = fixture('stripe/real-invoice-finalized-basil-exempt-discount.json');
    const taxable = fixture('stripe/real-invoice-paid-acacia-prorations.json');
    for (const f of [exempt, taxable]) expect((await daemon.post('stripe', f.body, f.headers)).status).toBe(202);
    await eventually(async () => (await byKey('in_1BasilExempt01')) !== undefined && (await byKey('in_1PgcProration01')) !== undefined, 30_000);

    const exemptInvoice = await daemon.api.tax.transactions.getByKey('stripe', 'in_1BasilExempt01');
    const customer = await daemon.api.tax.customers.getByKey('stripe', 'cus_BasilExempt01');
    expect(customer.customer_type).toBe('retail_exempt');
    // 36.00 − 3.60 = 32.40 in San Francisco, but the customer is exempt: no tax.
    expect(exemptInvoice.amounts?.final_transaction_amount).toBe('32.40');
    expect(new Decimal(exemptInvoice.tax?.total_tax ?? 'NaN').isZero()).toBe(true);
    // The same state's rates do apply to the customer who is not exempt (−15 + 45 + 60 = 90.00 in CA).
    const taxedInvoice = await daemon.api.tax.transactions.getByKey('stripe', 'in_1PgcProration01');
    expect(new Decimal(taxedInvoice.tax?.total_tax ?? '0').greaterThan(0)).toBe(true);

    // The customer's facts went first, then the transaction.
    const log = daemon.emulator.requestLog.entries().filter((e) => e.outcome === 'answered' && e.status !== null && e.status < 300);
    const customerPut = log.findIndex((e) => e.endpoint === 'customers.upsert' && e.record?.key === 'customer:stripe:cus_BasilExempt01');
    const invoicePut = log.findIndex((e) => e.endpoint === 'transactions.upsert' && e.record?.key === 'transaction:stripe:in_1BasilExempt01');
    expect(customerPut).toBeGreaterThanOrEqual(0);
    expect(customerPut).toBeLessThan(invoicePut);
  });

  it('does not upsert the customer again when a later version of the invoice carries the same facts', async () => {
    const exempt = fixture('stripe/real-invoice-finalized-basil-exempt-discount.json');
    expect((await daemon.post('stripe', exempt.body, exempt.headers)).status).toBe(202);
    await eventually(async () => (await byKey('in_1BasilExempt01')) !== undefined, 30_000);

    // invoice.paid a minute later: a new Stripe event about the same invoice.
    const later = structuredClone(exempt.body) as { id: string; type: string; created: number; data: { object: { status: string } } };
    later.id = 'evt_1BasilExempt02';
    later.type = 'invoice.paid';
    later.created += 60;
    later.data.object.status = 'paid';
    expect((await daemon.post('stripe', later, exempt.headers)).status).toBe(202);
    await eventually(async () => (await byKey('in_1BasilExempt01'))?.transaction_status === 'paid', 30_000);

    const puts = daemon.emulator.requestLog
      .entries()
      .filter((e) => e.endpoint === 'customers.upsert' && e.record?.key === 'customer:stripe:cus_BasilExempt01' && e.outcome === 'answered');
    expect(puts).toHaveLength(1);
  });
});
