import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VatClient } from '../../src/api/index.js';
import type { VatLedger } from '../../src/queue/vat-ledger.js';
import { createVatRig, deletedEvent, invoiceEvent, refundEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';
import { useRedis } from '../helpers/redis.js';

/**
 * The review's findings 1–4 and 7 (issue 15), each against real Redis and the emulator, the VAT
 * handler driven through the record processor with a clock of the test's own.
 */
describe('the VAT ledger never doubles and never loses a submission', () => {
  const ctx = useRedis();
  let rig: VatRig;

  beforeEach(async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
  });
  afterEach(async () => {
    await rig.close();
  });

  const dropNextSubmission = () => rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit', times: 1 }]);

  it('1a: a changed amount after a lost answer keeps the body that landed and reports the difference, never a second number', async () => {
    const record = vatRecord('INV-1');
    await rig.accept(invoiceEvent('INV-1', 1, [['100.00', '0.19']]));
    dropNextSubmission();
    expect((await rig.run(record)).kind).toBe('retry');
    // The first body landed (net 100.00, vat 19.00) but its answer was lost; then the invoice changes.
    await rig.accept(invoiceEvent('INV-1', 2, [['80.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('dead-lettered');

    expect([...rig.accepted().entries()]).toEqual([['INV-1', { net: '100.00', vat: '19.00', gross: '119.00', count: 1 }]]);
    const [entry] = await rig.ledger.forRecord('vat|api|INV-1');
    expect(entry?.state).toBe('confirmed');
    expect(JSON.parse(entry!.body!)).toMatchObject({ net: '100.00', vat: '19.00' });
    const [letter] = await rig.deadLettersOf(record);
    expect(letter?.error.code).toBe('VAT_CORRECTION_REQUIRED');
    // now 80.00 net → 15.20 vat (80 × 0.19), gross 95.20: differences −20.00, −3.80, −23.80
    expect(letter?.error.fields).toMatchObject({ net: ['INV-1: -20.00'], vat: ['INV-1: -3.80'], gross: ['INV-1: -23.80'] });
  });

  it('1b: a new rate after a lost answer files only the new part under its own number', async () => {
    const record = vatRecord('INV-2');
    await rig.accept(invoiceEvent('INV-2', 1, [['100.00', '0.19']]));
    dropNextSubmission();
    expect((await rig.run(record)).kind).toBe('retry');
    await rig.accept(invoiceEvent('INV-2', 2, [['100.00', '0.19'], ['50.00', '0.07']]));
    expect((await rig.settle(record)).kind).toBe('applied');

    // 19%: 100.00 + 19.00 (the body that landed, unchanged); 7%: 50.00 + 3.50 = 53.50, a new part.
    expect(Object.fromEntries(rig.accepted())).toEqual({
      'INV-2': { net: '100.00', vat: '19.00', gross: '119.00', count: 1 },
      'INV-2 (7.00% reduced)': { net: '50.00', vat: '3.50', gross: '53.50', count: 1 },
    });
    expect(await rig.deadLettersOf(record)).toEqual([]);
    const states = (await rig.ledger.forRecord('vat|api|INV-2')).map((e) => e.state);
    expect(states).toEqual(['confirmed', 'confirmed']);
  });

  it('2: dead-letters a second record that claims an invoice number already filed for another (VAT_NUMBER_COLLISION)', async () => {
    await rig.accept(invoiceEvent('A-1', 1, [['100.00', '0.19']], { number: '1001' }));
    expect((await rig.settle(vatRecord('A-1'))).kind).toBe('applied');
    await rig.accept(invoiceEvent('B-7', 1, [['40.00', '0.19']], { number: '1001', source: 'shopify' }));
    expect((await rig.settle(vatRecord('B-7', 'shopify'))).kind).toBe('dead-lettered');

    const [letter] = await rig.deadLettersOf(vatRecord('B-7', 'shopify'));
    expect(letter?.error.code).toBe('VAT_NUMBER_COLLISION');
    expect(letter?.error.message).toContain('api/A-1');
    expect(letter?.error.message).toContain('shopify/B-7');
    expect(letter?.error.message).toContain('prefix_by_source');
    expect(rig.accepted().get('1001')).toMatchObject({ net: '100.00', count: 1 });
  });

  it('3: a refund that arrives before its invoice waits for it, then reports its VAT correction once the invoice is filed', async () => {
    const refund = vatRecord('refund-R-1');
    await rig.accept(refundEvent('refund-R-1', 'INV-3', '50.00', '9.50'));
    const first = await rig.run(refund);
    expect(first.kind).toBe('delayed');
    expect(await rig.deadLettersOf(refund)).toEqual([]);

    await rig.accept(invoiceEvent('INV-3', 1, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-3'))).kind).toBe('applied');
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(refund);
    expect(letter?.error.code).toBe('VAT_CORRECTION_REQUIRED');
    // the refund takes back net 50.00 and VAT 9.50 (gross 59.50) of what INV-3 filed
    expect(letter?.error.fields).toMatchObject({ net: ['INV-3: -50.00'], vat: ['INV-3: -9.50'], gross: ['INV-3: -59.50'] });
  });

  it('3b: a refund decided while its invoice had no VAT filed is decided again once the invoice files some', async () => {
    const refund = vatRecord('refund-R-2');
    // The invoice first totals nothing (no VAT), the refund finds nothing filed to correct…
    await rig.accept(invoiceEvent('INV-6', 1, [['0.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-6'))).kind).toBe('applied');
    await rig.accept(refundEvent('refund-R-2', 'INV-6', '10.00', '1.90'));
    expect((await rig.settle(refund)).kind).toBe('applied');
    expect(await rig.deadLettersOf(refund)).toEqual([]);
    // …then it is corrected to 100.00 and filed: the refund now takes back VAT that is filed.
    await rig.accept(invoiceEvent('INV-6', 2, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-6'))).kind).toBe('applied');
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(refund);
    // 10.00 + 1.90 = 11.90
    expect(letter?.error.fields).toMatchObject({ net: ['INV-6: -10.00'], vat: ['INV-6: -1.90'], gross: ['INV-6: -11.90'] });
  });

  it('3c: a refund\'s correction, once reported and discarded by the operator, does not come back when its invoice changes', async () => {
    const refund = vatRecord('refund-R-3');
    await rig.accept(invoiceEvent('INV-9', 1, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-9'))).kind).toBe('applied');
    await rig.accept(refundEvent('refund-R-3', 'INV-9', '10.00', '1.90'));
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(refund);
    await rig.deadLetters.remove([letter!.id]);
    // The invoice is paid (same amounts): filed and unchanged; the refund is not decided again.
    await rig.accept(invoiceEvent('INV-9', 2, [['100.00', '0.19']], { status: 'paid' }));
    expect((await rig.settle(vatRecord('INV-9'))).kind).toBe('applied');
    const state = await rig.records.read(refund);
    expect(state.seq).toBe(state.appliedSeq);
    expect(await rig.deadLettersOf(refund)).toEqual([]);
  });

  it('4a: an invoice deleted after its VAT was filed is a VAT_CORRECTION_REQUIRED dead letter, not silence', async () => {
    const record = vatRecord('INV-4');
    await rig.accept(invoiceEvent('INV-4', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(deletedEvent('INV-4', 2));
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(record);
    expect(letter?.error.code).toBe('VAT_CORRECTION_REQUIRED');
    expect(letter?.error.fields).toMatchObject({ net: ['INV-4: -100.00'], vat: ['INV-4: -19.00'], gross: ['INV-4: -119.00'] });
  });

  it('4b: an invoice that now totals zero after its VAT was filed is a VAT_CORRECTION_REQUIRED dead letter', async () => {
    const record = vatRecord('INV-5');
    await rig.accept(invoiceEvent('INV-5', 1, [['100.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('applied');
    await rig.accept(invoiceEvent('INV-5', 2, [['0.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(record);
    expect(letter?.error.code).toBe('VAT_CORRECTION_REQUIRED');
    expect(letter?.error.fields).toMatchObject({ vat: ['INV-5: -19.00'] });
  });

  /** A pause the test releases: `reached` resolves when the code gets there. */
  function pausePoint() {
    let release!: () => void;
    let arrive!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    return { release, reached, wait: () => (arrive(), gate) };
  }

  it('7a: a worker that stalls after claiming the submission and resumes after its successor filed it does not send', async () => {
    const record = vatRecord('INV-7');
    await rig.accept(invoiceEvent('INV-7', 1, [['100.00', '0.19']]));
    const pause = pausePoint();
    // Worker A stalls (a long GC pause, a frozen VM) between claiming the entry and sending.
    const stallingLedger: VatLedger = {
      ...rig.ledger,
      async holds(ej, number, token) {
        await pause.wait();
        return rig.ledger.holds(ej, number, token);
      },
    };
    const a = rig.run(record, rig.handler({ ledger: stallingLedger }));
    await pause.reached;
    // Its lease runs out; worker B takes the job over and files the submission.
    rig.advance(10 * 60_000);
    expect((await rig.run(record)).kind).toBe('applied');
    const [entry] = await rig.ledger.forRecord('vat|api|INV-7');
    expect(entry?.state).toBe('confirmed');

    pause.release();
    // RECORD_BUSY: the job goes back without using an attempt.
    expect(await a).toMatchObject({ kind: 'delayed' });
    const [after] = await rig.ledger.forRecord('vat|api|INV-7');
    expect(after).toMatchObject({ state: 'confirmed', transaction_id: entry?.transaction_id });
    expect(rig.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit')).toHaveLength(1);
    expect(Number(await rig.redis.hget(rig.keys.counters, 'vat_fenced_writes'))).toBe(0);
    expect(await rig.deadLettersOf(record)).toEqual([]);
  });

  it('7b: a worker that stalls with the answer in hand cannot overwrite the entry its successor wrote; the refused write is counted', async () => {
    const record = vatRecord('INV-8');
    await rig.accept(invoiceEvent('INV-8', 1, [['100.00', '0.19']]));
    const pause = pausePoint();
    // Worker A sent (and the service accepted) but stalls before it writes the answer.
    const stalling: VatClient = {
      ...rig.api.vat,
      async submitTransaction(body) {
        const answer = await rig.api.vat.submitTransaction(body);
        await pause.wait();
        return answer;
      },
    };
    const a = rig.run(record, rig.handler({ vat: stalling }));
    await pause.reached;
    rig.advance(10 * 60_000);
    // B finds the lease run out: it resends the same bytes, the duplicate answer proves acceptance.
    expect((await rig.run(record)).kind).toBe('applied');
    const [entry] = await rig.ledger.forRecord('vat|api|INV-8');
    expect(entry?.state).toBe('confirmed');
    expect(entry?.note).toMatch(/duplicate answer/);

    pause.release();
    // RECORD_BUSY: the job goes back without using an attempt.
    expect(await a).toMatchObject({ kind: 'delayed' });
    const [after] = await rig.ledger.forRecord('vat|api|INV-8');
    expect(after).toMatchObject({ state: 'confirmed', note: entry?.note });
    expect(Number(await rig.redis.hget(rig.keys.counters, 'vat_fenced_writes'))).toBe(1);
    expect((await rig.ledger.history(after!.entity_jurisdiction!, 'INV-8')).map((h) => h.outcome)).toEqual([
      'sent',
      'resent',
      'confirmed',
      'fenced:confirmed',
    ]);
    // Two requests (A's and B's resend), one accepted submission.
    expect(rig.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit')).toHaveLength(2);
    expect(rig.accepted().get('INV-8')).toMatchObject({ count: 1 });
  });
});
