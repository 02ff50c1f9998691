import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { CanonicalEventInput } from '../../src/domain/events.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, refundEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A refund (credit note) of filed VAT is a VAT_CORRECTION_REQUIRED entry; the operator corrects
 * the filing by it and discards it (operations.md). docs/vat.md: "A refund that reported its
 * correction is not asked again". A refund is sent again as a new version whenever its source
 * touches it — WooCommerce lists refunds inside their order, so every order update is a new
 * version of each refund; an ERP may update a credit note — and each new version stated the whole
 * correction once more: an operator who applies what taxsync states took the VAT back twice.
 *
 * Model: a refund of a filed invoice goes through versions with random amounts (repeats likely),
 * perhaps cancelled at the end; after each, the operator applies and discards every new
 * correction. What the operator applied adds up to exactly what the refund takes back in the end.
 */
describe('a refund updated after its correction was stated', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  const cents = (text: string) => Math.round(Number(text) * 100);
  const euros = (c: number) => `${Math.trunc(c / 100)}.${String(Math.abs(c) % 100).padStart(2, '0')}`;
  /** Half-up cents of 19 % VAT: ⌊(net × 19 + 50) / 100⌋. */
  const vat19 = (c: number) => Math.floor((c * 19 + 50) / 100);

  it('states, over all its versions, exactly what the refund takes back', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    await rig.accept(invoiceEvent('INV-RV', 1, [['1000.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-RV'))).kind).toBe('applied');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(1_000, 1_000, 1_500, 2_000), { minLength: 1, maxLength: 4 }), fc.boolean(), async (amounts, cancelled) => {
        run += 1;
        const id = `R-RV${run}`;
        const refund = vatRecord(id);
        const applied = { net: 0, vat: 0 };
        const operator = async () => {
          for (const letter of await rig.deadLettersOf(refund)) {
            expect(letter.error.code).toBe('VAT_CORRECTION_REQUIRED');
            for (const m of letter.error.fields?.net ?? []) applied.net += cents(/: (-?\d+\.\d{2})$/.exec(m)![1]!);
            for (const m of letter.error.fields?.vat ?? []) applied.vat += cents(/: (-?\d+\.\d{2})$/.exec(m)![1]!);
            await rig.deadLetters.remove([letter.id]);
          }
        };
        let version = 0;
        let last: CanonicalEventInput | undefined;
        for (const amount of amounts) {
          version += 1;
          last = refundEvent(id, 'INV-RV', euros(amount), euros(vat19(amount)), version);
          await rig.accept(last);
          await rig.settle(refund);
          await operator();
        }
        if (cancelled) {
          version += 1;
          // As Stripe sends a voided credit note: the whole refund again.
          await rig.accept({ ...last!, id: `${id}-v${version}-cancelled`, type: 'refund.cancelled', occurred_at: new Date(Date.UTC(2025, 2, 3, 10, 0, version)).toISOString(), final: true } as CanonicalEventInput);
          await rig.settle(refund);
          await operator();
        }
        const final = amounts.at(-1)!;
        // Taken back in the end: the last version's amount and its 19 % VAT, or nothing once cancelled.
        const want = cancelled ? { net: 0, vat: 0 } : { net: -final, vat: -vat19(final) };
        expect(applied, `versions ${amounts.join(', ')}${cancelled ? ', then cancelled' : ''}`).toEqual(want);
      }),
      { numRuns: 40, examples: [[[1_000, 1_000], false], [[1_000, 1_500], false], [[1_000, 1_000], true]] },
    );
  }, 120_000);
});
