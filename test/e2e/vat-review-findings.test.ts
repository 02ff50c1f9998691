import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VatSettings } from '../../src/mapping/vat-settings.js';
import type { CanonicalEventInput } from '../../src/domain/events.js';
import { createVatRig, invoiceEvent, refundEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';
import { useRedis } from '../helpers/redis.js';

/**
 * The lost review of issue 15, each finding against real Redis and the emulator (the VAT handler
 * driven through the record processor on the rig's clock).
 */
describe('the review of the VAT ledger (issue 15)', () => {
  const ctx = useRedis();
  let rig: VatRig;

  beforeEach(async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, settings: { increases: 'supplement' } });
  });
  afterEach(async () => {
    await rig.close();
  });

  // As Stripe sends a voided credit note: the whole refund again (src/connectors/stripe/map.ts).
  const refundCancelled = (externalId: string, data: Record<string, unknown> = {}, version = 2): CanonicalEventInput => ({
    id: `${externalId}-v${version}-cancelled`,
    type: 'refund.cancelled',
    occurred_at: new Date(Date.UTC(2025, 2, 3, 10, 0, version)).toISOString(),
    final: true,
    connector: 'erp',
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data,
  });
  const dropNextSubmission = () => rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit', times: 1 }]);

  it('1: a second increase after a first supplement files only the new difference', async () => {
    const record = vatRecord('INV-S1');
    await rig.accept(invoiceEvent('INV-S1', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(invoiceEvent('INV-S1', 2, [['120.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    // The second increase arrives while the first supplement's answer is lost.
    await rig.accept(invoiceEvent('INV-S1', 3, [['150.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(invoiceEvent('INV-S1', 4, [['160.00', '0.19']]));
    dropNextSubmission();
    expect((await rig.run(record)).kind).toBe('retry');
    await rig.accept(invoiceEvent('INV-S1', 5, [['175.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');

    // 100 + 20 + 30 + 10 + 15 = 175 net; 19% of each: 19.00, 3.80, 5.70, 1.90, 2.85 = 33.25 = 175 × 0.19
    expect(Object.fromEntries(rig.accepted())).toEqual({
      'INV-S1': { net: '100.00', vat: '19.00', gross: '119.00', count: 1 },
      'INV-S1 (supplement 1)': { net: '20.00', vat: '3.80', gross: '23.80', count: 1 },
      'INV-S1 (supplement 2)': { net: '30.00', vat: '5.70', gross: '35.70', count: 1 },
      'INV-S1 (supplement 3)': { net: '10.00', vat: '1.90', gross: '11.90', count: 1 },
      'INV-S1 (supplement 4)': { net: '15.00', vat: '2.85', gross: '17.85', count: 1 },
    });
    expect(await rig.deadLettersOf(record)).toEqual([]);
  });

  it('2: a changed invoice-number prefix after filing does not file the invoice again under its new number', async () => {
    const record = vatRecord('INV-P1');
    await rig.accept(invoiceEvent('INV-P1', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    // The operator adds a prefix for the ERP (the daemon restarts with the new settings).
    const prefixed = VatSettings.parse({ ...rig.settings, invoice_number: { from: 'number', prefix_by_source: { api: 'ERP-' } } });
    const handler = rig.handler({ settings: prefixed });
    await rig.accept(invoiceEvent('INV-P1', 2, [['100.00', '0.19']], { status: 'paid' }));
    expect((await rig.run(record, handler)).kind).toBe('applied');
    expect(Object.fromEntries(rig.accepted())).toEqual({ 'INV-P1': { net: '100.00', vat: '19.00', gross: '119.00', count: 1 } });
    // An increase is a supplement of the number that was filed, not of the new one.
    await rig.accept(invoiceEvent('INV-P1', 3, [['110.00', '0.19']], { status: 'paid' }));
    expect((await rig.run(record, handler)).kind).toBe('applied');
    expect([...rig.accepted().keys()]).toEqual(['INV-P1', 'INV-P1 (supplement 1)']);
    expect(await rig.deadLettersOf(record)).toEqual([]);
  });

  it('2b: a prefix changed while the first submission\'s answer is lost resends the old number\'s bytes and files nothing new', async () => {
    const record = vatRecord('INV-P2');
    await rig.accept(invoiceEvent('INV-P2', 1, [['100.00', '0.19']]));
    dropNextSubmission();
    expect((await rig.run(record)).kind).toBe('retry');
    const prefixed = VatSettings.parse({ ...rig.settings, invoice_number: { from: 'number', prefix_by_source: { api: 'ERP-' } } });
    await rig.accept(invoiceEvent('INV-P2', 2, [['100.00', '0.19']], { status: 'paid' }));
    let result = await rig.run(record, rig.handler({ settings: prefixed }));
    for (let i = 0; i < 5 && result.kind !== 'applied'; i++) result = await rig.run(record, rig.handler({ settings: prefixed }));
    expect(result.kind).toBe('applied');
    expect(Object.fromEntries(rig.accepted())).toEqual({ 'INV-P2': { net: '100.00', vat: '19.00', gross: '119.00', count: 1 } });
    expect((await rig.ledger.forRecord('vat|api|INV-P2')).map((e) => [e.invoice_number, e.state])).toEqual([['INV-P2', 'confirmed']]);
  });

  it('3: a void after a supplement states the reversal of each filed submission under its own number', async () => {
    const record = vatRecord('INV-C1');
    await rig.accept(invoiceEvent('INV-C1', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(invoiceEvent('INV-C1', 2, [['150.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(invoiceEvent('INV-C1', 3, [['150.00', '0.19']], { type: 'invoice.cancelled' }));
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(record);
    expect(letter?.error.code).toBe('VAT_CORRECTION_REQUIRED');
    // Filed: INV-C1 100.00 + 19.00 = 119.00 and its supplement 50.00 + 9.50 = 59.50 (150 × 0.19 = 28.50 in all).
    expect(letter?.error.fields).toMatchObject({
      net: ['INV-C1 (supplement 1): -50.00', 'INV-C1: -100.00'],
      vat: ['INV-C1 (supplement 1): -9.50', 'INV-C1: -19.00'],
      gross: ['INV-C1 (supplement 1): -59.50', 'INV-C1: -119.00'],
    });
  });

  it('4a: a refund cancelled after its correction was reported states the undo once, with the opposite amounts', async () => {
    await rig.accept(invoiceEvent('INV-R1', 1, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-R1'))).kind).toBe('applied');
    const refund = vatRecord('R-1');
    await rig.accept(refundEvent('R-1', 'INV-R1', '10.00', '1.90'));
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    await rig.accept(refundCancelled('R-1'));
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    const letters = (await rig.deadLettersOf(refund)).map((l) => l.error.fields?.net);
    // the refund took back 10.00 net; its cancellation gives it back
    expect(letters.sort()).toEqual([['INV-R1: -10.00'], ['INV-R1: 10.00']]);
  });

  it('4b: a refund cancelled before any correction was reported states no undo when its invoice files VAT later', async () => {
    const invoice = vatRecord('INV-R2');
    await rig.accept(invoiceEvent('INV-R2', 1, [['0.00', '0.19']]));
    expect((await rig.settle(invoice)).kind).toBe('applied');
    const refund = vatRecord('R-2');
    await rig.accept(refundEvent('R-2', 'INV-R2', '10.00', '1.90'));
    expect((await rig.settle(refund)).kind).toBe('applied');
    await rig.accept(refundCancelled('R-2', { invoice_external_id: 'INV-R2', issued_at: '2025-03-03T10:00:00Z', currency: 'EUR', amount: '10.00', tax_amount: '1.90' }));
    expect((await rig.settle(refund)).kind).toBe('applied');
    // The invoice files VAT now: the cancelled refund never took anything back, so nothing to undo.
    await rig.accept(invoiceEvent('INV-R2', 2, [['100.00', '0.19']]));
    expect((await rig.settle(invoice)).kind).toBe('applied');
    await rig.settle(refund);
    expect(await rig.deadLettersOf(refund)).toEqual([]);
  });

  it('4c: a credit with no invoice cancelled before its correction was reported states no undo; one cancelled after does', async () => {
    const credit = (id: string): CanonicalEventInput => ({
      id: `${id}-v1`,
      type: 'refund.created',
      occurred_at: '2025-03-03T10:00:01Z',
      connector: 'erp',
      record: { kind: 'transaction', source: 'api', external_id: id },
      data: { issued_at: '2025-03-03T10:00:00Z', currency: 'EUR', amount: '10.00', tax_amount: '1.90', addresses: { billing: { country: 'DE' } } },
    });
    const early = vatRecord('CR-1');
    // Created and cancelled before the worker ran: one run, for the cancellation.
    await rig.accept(credit('CR-1'), refundCancelled('CR-1', credit('CR-1').data));
    expect((await rig.settle(early)).kind).toBe('applied');
    expect(await rig.deadLettersOf(early)).toEqual([]);

    const late = vatRecord('CR-2');
    await rig.accept(credit('CR-2'));
    expect((await rig.settle(late)).kind).toBe('dead-lettered');
    await rig.accept(refundCancelled('CR-2', credit('CR-2').data));
    expect((await rig.settle(late)).kind).toBe('dead-lettered');
    // 10.00 net taken back by the credit, given back by its cancellation
    expect((await rig.deadLettersOf(late)).map((l) => l.error.fields?.net?.[0]?.replace(/^.*: /, '')).sort()).toEqual(['-10.00', '10.00']);
  });
});
