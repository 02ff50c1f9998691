import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import type { Fault } from '../../helpers/model-engine.js';
import { entriesOf, startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Invariant 4: the linked refunds of one invoice never add up past 1 in the tax engine. taxsync's
 * refund ledger holds the share each refund claimed; it must never hold less than what the engine
 * may hold, also when a refund's write was applied but its answer lost and the version then failed
 * for good (dead-lettered) or the worker died. The model engine accepts refunds past the whole and
 * records it (a real engine's rule there is not documented), so the test sees what taxsync sent.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const tx = (external_id: string): RecordKey => ({ kind: 'transaction', source: 'api', external_id });
const INVOICE = tx('INV-1');
const event = (id: string, type: string, record: RecordKey, t: number, data: unknown) => CanonicalEvent.parse({ id, type, occurred_at: at(t), connector: 'erp', record, data });
// One line of 100.00, tax-exclusive: a refund of `amount` takes amount / 100 of it.
const invoice = () => event('inv-1', 'invoice.upserted', INVOICE, 1, { number: 'INV-1', issued_at: at(0), status: 'active', currency: 'USD', tax_inclusive: false, lines: [{ id: '1', unit_price: '100.00', quantity: '1' }] });
const refund = (name: string, t: number, amount: string) => event(`${name}-${t}`, 'refund.created', tx(name), t, { invoice_external_id: 'INV-1', issued_at: at(0), currency: 'USD', amount });

describe('linked refunds of one invoice', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('never add up past the whole invoice when a larger version reached the engine but was dead-lettered', async () => {
    // R1 takes 0.3, then 0.9: that write is applied but its answer lost, and every retry fails
    // until the version is dead-lettered. The engine holds R1 at 0.9 whatever taxsync recorded.
    rig = await startModelRig(redis.url, {
      queues: ['transactions'],
      faults: (key, n): Fault => (key !== 'transaction|api|refund-R1' || n === 0 ? 'ok' : n === 1 ? 'lost' : 'fail'),
    });
    await rig.accept(invoice());
    await rig.accept(refund('refund-R1', 2, '30.00'));
    expect(await rig.settle([INVOICE, tx('refund-R1')])).toBe(true);
    await rig.accept(refund('refund-R1', 3, '90.00'));
    expect(await rig.settle([tx('refund-R1')])).toBe(true);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['API_SERVER_ERROR']);

    // R2 takes 0.7: with R1 at 0.9 in the engine, that is more than the whole.
    await rig.accept(refund('refund-R2', 4, '70.00'));
    expect(await rig.settle([tx('refund-R2')])).toBe(true);
    expect(rig.engine.violations).toEqual([]);
    expect(entriesOf(await rig.deadLetters(), tx('refund-R2')).map((e) => e.error.code)).toEqual(['MAPPING_INVALID']);
  });

  const AMOUNTS = ['20.00', '30.00', '50.00', '70.00', '90.00'];
  const faultArb = fc.constantFrom<Fault>('ok', 'lost', 'lost', 'late', 'fail', 'conflict');

  it('never add up past the whole, whatever answers are lost, versions dead-lettered or workers stopped (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          steps: fc.array(fc.record({ refund: fc.constantFrom('refund-R1', 'refund-R2'), amount: fc.constantFrom(...AMOUNTS), settle: fc.constantFrom(false, false, true) }), { minLength: 2, maxLength: 6 }),
          faults: fc.record({ 'refund-R1': fc.array(faultArb, { maxLength: 4 }), 'refund-R2': fc.array(faultArb, { maxLength: 4 }) }),
          crashes: fc.array(fc.record({ point: fc.constantFrom('before-mark' as const, 'before-ledger' as const), record: fc.constantFrom('refund-R1', 'refund-R2'), nth: fc.nat(2) }), { maxLength: 2 }),
        }),
        async (run) => {
          rig = await startModelRig(redis.url, {
            queues: ['transactions'],
            crashes: run.crashes,
            faults: (key, n) => (run.faults as Record<string, Fault[]>)[key.split('|').at(-1)!]?.[n] ?? 'ok',
          });
          try {
            await rig.accept(invoice());
            const newest = new Map<string, { id: string; amount: string }>();
            for (const [i, step] of run.steps.entries()) {
              const e = refund(step.refund, i + 2, step.amount);
              newest.set(step.refund, { id: e.id, amount: step.amount });
              await rig.accept(e);
              if (step.settle) await rig.settle([INVOICE, tx(step.refund)]);
            }
            const keys = [INVOICE, tx('refund-R1'), tx('refund-R2')];
            expect(await rig.settle(keys)).toBe(true);
            expect(rig.engine.violations).toEqual([]);
            // Each refund ends at its newest share, or that version is in the dead-letter queue.
            const entries = await rig.deadLetters();
            for (const [name, want] of newest) {
              const stored = rig.engine.transactions.get(`api|${name}`);
              const share = (stored?.body.refund_info as { refund_linked_percentage?: string } | undefined)?.refund_linked_percentage;
              const dead = entriesOf(entries, tx(name)).some((e) => (e.event as { id?: string }).id === want.id);
              expect(dead || (share !== undefined && new Decimal(share).eq(new Decimal(want.amount).dividedBy(100))), `${name} ends at ${want.amount}`).toBe(true);
            }
          } finally {
            await rig.close();
            rig = undefined;
          }
        },
      ),
      { numRuns: Number(process.env.TAXSYNC_MODEL_RUNS ?? 30), endOnFailure: true },
    );
  }, 120_000);
});

describe('a refund moved to another invoice', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('frees its share of the invoice it left', async () => {
    // R1 is first recorded against INV-1 (0.6), then corrected to INV-2. The engine's INV-1 then
    // has no refund, so R2 may take 0.5 of it.
    const invoiceOf = (id: string) => event(`${id}-1`, 'invoice.upserted', tx(id), 1, { number: id, issued_at: at(0), status: 'active', currency: 'USD', tax_inclusive: false, lines: [{ id: '1', unit_price: '100.00', quantity: '1' }] });
    const refundOf = (name: string, t: number, invoiceId: string, amount: string) => event(`${name}-${t}`, 'refund.created', tx(name), t, { invoice_external_id: invoiceId, issued_at: at(0), currency: 'USD', amount });
    rig = await startModelRig(redis.url, { queues: ['transactions'] });
    await rig.accept(invoiceOf('INV-1'));
    await rig.accept(invoiceOf('INV-2'));
    await rig.accept(refundOf('refund-R1', 2, 'INV-1', '60.00'));
    expect(await rig.settle([tx('INV-1'), tx('INV-2'), tx('refund-R1')])).toBe(true);
    await rig.accept(refundOf('refund-R1', 3, 'INV-2', '60.00'));
    expect(await rig.settle([tx('refund-R1')])).toBe(true);
    expect(rig.engine.transactions.get('api|refund-R1')?.body.created_from).toBe(rig.engine.transactions.get('api|INV-2')?.id);

    await rig.accept(refundOf('refund-R2', 4, 'INV-1', '50.00'));
    expect(await rig.settle([tx('refund-R2')])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    expect(rig.engine.transactions.get('api|refund-R2')?.body).toMatchObject({ created_from: rig.engine.transactions.get('api|INV-1')?.id, refund_info: { refund_linked_percentage: '0.5' } });
  });
});
