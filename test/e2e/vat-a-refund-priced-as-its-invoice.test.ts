import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { CanonicalEventInput } from '../../src/domain/events.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A refund's `amount` excludes tax, except when `priced_as_invoice` says it follows its invoice's
 * pricing (docs/events.md): Shopify's refund subtotals include tax in a shop whose prices include
 * tax (src/connectors/shopify/map.ts). The tax engine's refund nets the tax out then
 * (src/mapping/refund.ts); the VAT correction took `amount` as the net all the same, so a refund of
 * a tax-inclusive invoice took back its VAT twice over in `net` and `gross` (119.00 refunded, 19.00
 * of it VAT: net -119.00, gross -138.00 instead of -100.00 and -119.00).
 */
describe('the VAT correction of a refund priced as its invoice', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  const euros = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
  const cents = (text: string) => Math.round(Number(text) * 100);

  it('takes back the net without the refunded tax when the refund follows a tax-inclusive invoice', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.boolean(), fc.integer({ min: 100, max: 50_000 }), fc.integer({ min: 0, max: 1_000 }), async (inclusive, pricedAsInvoice, amount, tax) => {
        run += 1;
        const invoice = `INV-PI${run}`;
        const base = invoiceEvent(invoice, 1, [['1190.00', '0.19']]);
        await rig.accept({ ...base, data: { ...(base.data as Record<string, unknown>), tax_inclusive: inclusive } } as CanonicalEventInput);
        expect((await rig.settle(vatRecord(invoice))).kind).toBe('applied');
        const refund = vatRecord(`R-PI${run}`);
        await rig.accept({
          id: `R-PI${run}-v1`,
          type: 'refund.created',
          occurred_at: '2025-03-03T10:00:00Z',
          connector: 'erp',
          record: { kind: 'transaction', source: 'api', external_id: `R-PI${run}` },
          data: { invoice_external_id: invoice, issued_at: '2025-03-03T10:00:00Z', currency: 'EUR', amount: euros(amount + tax), tax_amount: euros(tax), ...(pricedAsInvoice ? { priced_as_invoice: true } : {}) },
        });
        expect((await rig.settle(refund)).kind).toBe('dead-lettered');
        const [letter] = await rig.deadLettersOf(refund);
        const sum = (field: string) => (letter?.error.fields?.[field] ?? []).reduce((t, m) => t + cents(/: (-?\d+\.\d{2})$/.exec(m)![1]!), 0);
        // The refund's amount is amount + tax cents. Priced as a tax-inclusive invoice, its net is
        // that less the tax; otherwise it is the net itself. The VAT taken back is the stated tax.
        const net = pricedAsInvoice && inclusive ? amount : amount + tax;
        // (0 − x, not −x: no tax stated is 0 taken back, and toEqual tells −0 from 0.)
        expect({ net: sum('net'), vat: sum('vat'), gross: sum('gross') }, `inclusive ${inclusive}, priced as invoice ${pricedAsInvoice}`).toEqual({ net: 0 - net, vat: 0 - tax, gross: 0 - (net + tax) });
      }),
      { numRuns: 25, examples: [[true, true, 10_000, 1_900], [false, false, 10_000, 0]] },
    );
  }, 120_000);
});
