import { afterEach, describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { resendRecord } from '../../../src/queue/resend.js';
import type { Fault } from '../../helpers/model-engine.js';
import { startModelRig, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * A cancellation is sent as the document it cancels with its status cancelled: its data (any
 * subset) laid over the version before it (docs/mapping.md). That version must be the one the
 * engine may hold — also when its write was applied but never recorded (answer lost, worker
 * killed), and also when the version before is itself a cancellation (a dead-lettered one being
 * replayed). Otherwise the cancellation is dropped as "never sent" or sent with stale data, and the
 * engine keeps an active document the source cancelled (invariant 2).
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
const tx = (external_id: string): RecordKey => ({ kind: 'transaction', source: 'api', external_id });
const INVOICE = tx('INV-1');
const R1 = tx('refund-R1');
const R2 = tx('refund-R2');
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-1' };
const EXEMPTION: RecordKey = { kind: 'exemption', source: 'api', external_id: 'EX-1' };
const event = (id: string, type: string, record: RecordKey, t: number, data: unknown) => CanonicalEvent.parse({ id, type, occurred_at: at(t), connector: 'erp', record, data });
const invoice = (t: number, price = '100.00') =>
  event(`inv-${t}`, 'invoice.upserted', INVOICE, t, { number: 'INV-1', issued_at: at(0), status: 'active', currency: 'USD', tax_inclusive: false, lines: [{ id: '1', unit_price: price, quantity: '1' }] });
const refundData = (amount: string) => ({ invoice_external_id: 'INV-1', issued_at: at(0), currency: 'USD', amount });

describe('cancellations reach the tax engine', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });
  const stored = (key: RecordKey) => rig!.engine.transactions.get(`${key.source}|${key.external_id}`);

  it('cancels a refund whose create reached the engine when the cancellation arrives before the create was recorded', async () => {
    // A Stripe credit note created and voided: the void carries the whole note. The worker is
    // killed after the engine stored the refund, before taxsync marked it; the void arrives meanwhile.
    rig = await startModelRig(redis.url, {
      queues: ['transactions'],
      crashes: [{ point: 'before-mark', record: R1.external_id, nth: 0 }],
      onCrash: () => rig!.accept(event('r1-void', 'refund.cancelled', R1, 5, refundData('50.00'))),
    });
    await rig.accept(invoice(1));
    expect(await rig.settle([INVOICE])).toBe(true);
    await rig.accept(event('r1-1', 'refund.created', R1, 2, refundData('50.00')));
    expect(await rig.settle([INVOICE, R1])).toBe(true);
    expect(rig.crashed).toHaveLength(1);
    expect(stored(R1)?.body).toMatchObject({ transaction_status: 'cancelled', refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' } });
  });

  it('lays a partial cancellation over the version the engine took although its answer was lost', async () => {
    // Version 2 (95.00) reaches the engine, the worker is killed before the mark, and an ERP
    // cancellation stating nothing else arrives: the engine must end with 95.00, cancelled.
    rig = await startModelRig(redis.url, {
      queues: ['transactions'],
      crashes: [{ point: 'before-mark', record: INVOICE.external_id, nth: 1 }],
      onCrash: () => rig!.accept(event('inv-cancel', 'invoice.cancelled', INVOICE, 5, {})),
    });
    await rig.accept(invoice(1, '80.00'));
    expect(await rig.settle([INVOICE])).toBe(true);
    await rig.accept(invoice(2, '95.00'));
    expect(await rig.settle([INVOICE])).toBe(true);
    expect(rig.crashed).toHaveLength(1);
    expect(stored(INVOICE)?.body).toMatchObject({ transaction_status: 'cancelled', items: [expect.objectContaining({ unit_price: '95' })] });
  });

  it('sends a dead-lettered invoice cancellation when it is replayed', async () => {
    // The cancellation is refused once (409), dead-lettered, and replayed by the operator.
    rig = await startModelRig(redis.url, { queues: ['transactions'], faults: (key, n): Fault => (key === 'transaction|api|INV-1' && n === 1 ? 'conflict' : 'ok') });
    await rig.accept(invoice(1));
    expect(await rig.settle([INVOICE])).toBe(true);
    await rig.accept(event('inv-cancel', 'invoice.cancelled', INVOICE, 2, {}));
    expect(await rig.settle([INVOICE])).toBe(true);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['API_INVALID']);
    await rig.replayAll();
    expect(await rig.settle([INVOICE])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    expect(stored(INVOICE)?.body).toMatchObject({ transaction_status: 'cancelled', items: [expect.objectContaining({ unit_price: '100' })] });
  });

  it('sends a dead-lettered refund cancellation when it is replayed', async () => {
    rig = await startModelRig(redis.url, { queues: ['transactions'], faults: (key, n): Fault => (key === 'transaction|api|refund-R1' && n === 1 ? 'conflict' : 'ok') });
    await rig.accept(invoice(1));
    await rig.accept(event('r1-1', 'refund.created', R1, 2, refundData('50.00')));
    expect(await rig.settle([INVOICE, R1])).toBe(true);
    await rig.accept(event('r1-cancel', 'refund.cancelled', R1, 3, {}));
    expect(await rig.settle([R1])).toBe(true);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['API_INVALID']);
    await rig.replayAll();
    expect(await rig.settle([R1])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    expect(stored(R1)?.body).toMatchObject({ transaction_status: 'cancelled', refund_info: { refund_linked_percentage: '0.5' } });
  });

  it('sends a dead-lettered exemption cancellation when it is replayed', async () => {
    let refusals = 1;
    rig = await startModelRig(redis.url, {
      queues: ['customers'],
      faults: (key): Fault => {
        if (!key.startsWith('exemption|') || key === 'exemption|new' || refusals === 0) return 'ok';
        refusals -= 1;
        return 'conflict';
      },
    });
    await rig.accept(event('c-1', 'customer.upserted', CUSTOMER, 1, { name: 'Acme Wholesale' }));
    await rig.accept(event('x-1', 'exemption.upserted', EXEMPTION, 2, { customer_external_id: 'C-1', country: 'US', jurisdictions: ['CA'], start_date: '2026-01-01', exemption_type: 'full' }));
    expect(await rig.settle([CUSTOMER, EXEMPTION])).toBe(true);
    // Created by POST; the cancellation is the first PUT to it, refused once.
    await rig.accept(event('x-cancel', 'exemption.cancelled', EXEMPTION, 3, {}));
    expect(await rig.settle([EXEMPTION])).toBe(true);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['API_INVALID']);
    await rig.replayAll();
    expect(await rig.settle([EXEMPTION])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    const live = [...rig.engine.exemptions.values()].filter((e) => !e.deleted);
    expect(live.map((e) => e.body)).toEqual([expect.objectContaining({ jurisdictions: ['CA'], exemption_status: 'cancelled' })]);
  });

  it('frees the share of a cancelled refund once it is deleted', async () => {
    // docs/mapping.md: a cancelled refund keeps its share of the invoice until it is deleted.
    rig = await startModelRig(redis.url, { queues: ['transactions'] });
    await rig.accept(invoice(1));
    await rig.accept(event('r1-1', 'refund.created', R1, 2, refundData('50.00')));
    expect(await rig.settle([INVOICE, R1])).toBe(true);
    await rig.accept(event('r1-cancel', 'refund.cancelled', R1, 3, {}));
    expect(await rig.settle([R1])).toBe(true);
    await rig.accept(event('r1-delete', 'refund.deleted', R1, 4, {}));
    expect(await rig.settle([R1])).toBe(true);
    // 0.6 of the invoice: with R1 deleted, nothing else claims any of it.
    await rig.accept(event('r2-1', 'refund.created', R2, 5, refundData('60.00')));
    expect(await rig.settle([R2])).toBe(true);
    expect(await rig.deadLetters()).toEqual([]);
    expect(stored(R2)?.body).toMatchObject({ transaction_status: 'active', refund_info: { refund_linked_percentage: '0.6' } });
  });
});

describe('cancellations of refunds the engine does not hold, or that claim more', () => {
  const redis = useRedis();
  let rig: ModelRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });
  const stored = (key: RecordKey) => rig!.engine.transactions.get(`${key.source}|${key.external_id}`);
  const resend = (record: RecordKey) =>
    resendRecord({ queues: rig!.pipeline.queues, keys: rig!.pipeline.keys, audit: createAuditLog(rig!.pipeline.producerConnection, rig!.pipeline.keys, { actor: 'operator' }), trace: { maxEntries: 50, maxAgeMs: 600_000 } }, record);

  it('never sends, on a resend, a refund cancellation that was dropped because the refund never reached the engine', async () => {
    // A Stripe credit note voided before taxsync ever sent it: the void (whole data) has nothing
    // to cancel in the engine. A later resend of the record must not create it, cancelled, taking
    // a share of the invoice that no refund there holds.
    rig = await startModelRig(redis.url, { queues: ['transactions'] });
    await rig.accept(invoice(1));
    await rig.accept(event('r1-void', 'refund.cancelled', R1, 2, refundData('50.00')));
    expect(await rig.settle([INVOICE, R1])).toBe(true);
    expect(stored(R1)).toBeUndefined();
    expect(await resend(R1)).toBe('queued');
    expect(await rig.settle([INVOICE, R1])).toBe(true);
    expect(stored(R1)).toBeUndefined();
  });

  it('checks a cancellation that raises the refund against the invoice\u2019s other refunds', async () => {
    // R1 takes 0.5, R2 0.3; R2's cancellation states 60.00 (0.6): 0.5 + 0.6 is past the whole, so
    // it is dead-lettered instead of sent (a cancelled refund keeps its share in the engine).
    rig = await startModelRig(redis.url, { queues: ['transactions'] });
    await rig.accept(invoice(1));
    await rig.accept(event('r1-1', 'refund.created', R1, 2, refundData('50.00')));
    await rig.accept(event('r2-1', 'refund.created', R2, 2, refundData('30.00')));
    expect(await rig.settle([INVOICE, R1, R2])).toBe(true);
    await rig.accept(event('r2-cancel', 'refund.cancelled', R2, 3, refundData('60.00')));
    expect(await rig.settle([R2])).toBe(true);
    expect(rig.engine.violations).toEqual([]);
    expect((await rig.deadLetters()).map((e) => e.error.code)).toEqual(['MAPPING_INVALID']);
    expect(stored(R2)?.body).toMatchObject({ transaction_status: 'active', refund_info: { refund_linked_percentage: '0.3' } });
  });
});
