import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalEvent } from '../../../src/domain/events.js';
import type { RecordKey } from '../../../src/domain/record-key.js';
import type { Fault } from '../../helpers/model-engine.js';
import { entriesOf, startModelRig, type Crash, type ModelRig } from '../../helpers/model-rig.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * Model test of customers and their exemptions (DESIGN.md invariants 1, 2 and 6): random
 * interleavings of updates, cancellations and deletions, exemptions before their customer,
 * duplicates and equal timestamps; writes that fail before or after the engine applied them
 * (an exemption create is a POST: not idempotent); jobs stopped before and after the mark;
 * replays and `taxsync resend` racing new events. Once settled (and an operator replayed what was
 * dead-lettered): the customer is at its newest state, its exemption exists once at most and at
 * its newest state, or the newest event of the record is in the dead-letter queue.
 */

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);
const CUSTOMER: RecordKey = { kind: 'customer', source: 'api', external_id: 'C-M' };
const EXEMPTION: RecordKey = { kind: 'exemption', source: 'api', external_id: 'EX-M' };
type Name = 'customer' | 'exemption';
const NAMES = ['Ada', 'Grace'];
const END_DATES = [null, '2026-12-31'];

interface Spec {
  record: Name;
  op: 'upsert' | 'cancel' | 'delete';
  t: number;
  value: number;
  twice: boolean;
  pause: number;
}

function eventOf(spec: Spec, id: string): CanonicalEvent {
  const envelope = { id, occurred_at: new Date(BASE + spec.t * 1000).toISOString(), connector: 'erp' };
  if (spec.record === 'customer') {
    return spec.op === 'delete'
      ? CanonicalEvent.parse({ ...envelope, record: CUSTOMER, type: 'customer.deleted', data: {} })
      : CanonicalEvent.parse({ ...envelope, record: CUSTOMER, type: 'customer.upserted', data: { name: NAMES[spec.value % 2] } });
  }
  if (spec.op === 'delete') return CanonicalEvent.parse({ ...envelope, record: EXEMPTION, type: 'exemption.deleted', data: {} });
  if (spec.op === 'cancel') return CanonicalEvent.parse({ ...envelope, record: EXEMPTION, type: 'exemption.cancelled', data: {} });
  return CanonicalEvent.parse({
    ...envelope,
    record: EXEMPTION,
    type: 'exemption.upserted',
    data: { customer_external_id: 'C-M', country: 'US', jurisdictions: ['CA'], start_date: '2026-01-01', end_date: END_DATES[spec.value % 2], exemption_type: 'full' },
  });
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  record: fc.constantFrom<Name>('customer', 'exemption', 'exemption'),
  op: fc.constantFrom('upsert', 'upsert', 'cancel', 'delete'),
  t: fc.integer({ min: 1, max: 6 }),
  value: fc.nat(3),
  twice: fc.boolean(),
  pause: fc.constantFrom(0, 0, 5, 25),
});
const faultArb = fc.constantFrom<Fault>('ok', 'ok', 'lost', 'late', 'fail', 'limit', 'conflict');
const runArb = fc.record({
  specs: fc.array(specArb, { minLength: 2, maxLength: 8 }),
  customerFaults: fc.array(faultArb, { maxLength: 3 }),
  exemptionFaults: fc.array(faultArb, { maxLength: 4 }),
  crashes: fc.array(
    fc.record({ point: fc.constantFrom('before-mark' as const, 'after-mark' as const), record: fc.constantFrom('C-M', 'EX-M'), nth: fc.nat(2) }) as fc.Arbitrary<Crash>,
    { maxLength: 3 },
  ),
  coalesceMs: fc.constantFrom(0, 0, 40),
  workers: fc.constantFrom(1, 2),
  replayAfter: fc.option(fc.nat(7), { nil: undefined }),
});

describe('customers and exemptions under random interleavings, faults and crashes (model)', () => {
  const redis = useRedis();

  it('leave the customer and its exemption at their newest state, the exemption never twice, or the newest event dead-lettered', async () => {
    await fc.assert(
      fc.asyncProperty(runArb, async (run) => {
        let exemptionWrites = 0;
        const rig: ModelRig = await startModelRig(redis.url, {
          faults: (key, n) => (key.startsWith('exemption|') ? (run.exemptionFaults[exemptionWrites++] ?? 'ok') : (run.customerFaults[n] ?? 'ok')),
          crashes: run.crashes,
          coalesceMs: run.coalesceMs,
          workers: run.workers,
          queues: ['customers'],
        });
        try {
          const newest = new Map<Name, { spec: Spec; event: CanonicalEvent }>();
          for (const [i, spec] of run.specs.entries()) {
            const event = eventOf(spec, `e-${i}`);
            await rig.accept(event);
            if (spec.twice) await rig.accept(event);
            const held = newest.get(spec.record);
            if (held === undefined || spec.t >= held.spec.t) newest.set(spec.record, { spec, event });
            if (spec.pause > 0) await new Promise((r) => setTimeout(r, spec.pause));
            if (run.replayAfter === i) await rig.replayAll();
          }
          expect(await rig.settle([CUSTOMER, EXEMPTION]), 'settled before the deadline').toBe(true);
          rig.engine.faults = () => 'ok';
          rig.crashesOn = false;
          await rig.replayAll();
          expect(await rig.settle([CUSTOMER, EXEMPTION]), 'settled after the replay').toBe(true);
          // An exemption still waiting for its customer when the replay ran may expire once more; a second round then has the customer.
          await rig.replayAll();
          expect(await rig.settle([CUSTOMER, EXEMPTION]), 'settled after the second replay').toBe(true);

          const entries = await rig.deadLetters();
          const dead = (name: Name) => entriesOf(entries, name === 'customer' ? CUSTOMER : EXEMPTION).some((e) => (e.event as { id?: string } | null)?.id === newest.get(name)?.event.id);
          const problems: string[] = [];
          // What may stay dead-lettered once the service works and everything was replayed: an
          // exemption whose customer is not in the engine. Anything else is a version taxsync lost.
          const customerLive = rig.engine.customers.get('api|C-M')?.deleted === false;
          for (const entry of entries) {
            if (!(entry.record?.kind === 'exemption' && entry.error.code === 'WAITING_EXPIRED' && !customerLive)) {
              problems.push(`left in the dead-letter queue: ${entry.record?.external_id} ${entry.error.code} ${entry.error.message}`);
            }
          }
          const customer = newest.get('customer');
          const stored = rig.engine.customers.get('api|C-M');
          if (customer && !dead('customer')) {
            if (customer.spec.op === 'delete' ? stored !== undefined && !stored.deleted : stored?.deleted !== false || stored.body.name !== NAMES[customer.spec.value % 2]) {
              problems.push(`customer: newest ${customer.event.type} ${JSON.stringify(customer.event.data)}, engine ${JSON.stringify(stored ?? null)}`);
            }
          }
          const live = [...rig.engine.exemptions.values()].filter((e) => !e.deleted);
          if (live.length > 1) problems.push(`${live.length} live exemptions for one record: ${JSON.stringify(live.map((e) => e.body))}`);
          const exemption = newest.get('exemption');
          if (exemption && !dead('exemption')) {
            const body = live[0]?.body;
            const ok =
              exemption.spec.op === 'delete'
                ? live.length === 0
                : exemption.spec.op === 'cancel'
                  ? body === undefined || body.exemption_status === 'cancelled'
                  : body !== undefined && body.exemption_status === 'active' && (body.end_date ?? null) === END_DATES[exemption.spec.value % 2];
            if (!ok) problems.push(`exemption: newest ${exemption.event.type} ${JSON.stringify(exemption.event.data)}, engine ${JSON.stringify(live.map((e) => e.body))}`);
          }
          expect(problems, JSON.stringify({ crashed: rig.crashed, dead: entries.map((e) => `${e.record?.external_id} ${e.error.code} ${e.error.message}`) }, null, 1)).toEqual([]);
        } finally {
          await rig.close();
        }
      }),
      { numRuns: Number(process.env.TAXSYNC_MODEL_RUNS ?? 25), endOnFailure: true },
    );
  }, 180_000);
});
