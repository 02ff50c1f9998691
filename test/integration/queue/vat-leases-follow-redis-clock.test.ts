import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { createVatLedger, type SubmissionFacts } from '../../../src/queue/vat-ledger.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * A VAT attempt's lease decides who may send (DESIGN.md invariant 5): while it is live, no other
 * worker may take the submission over (it would resend the same bytes beside the live attempt, or
 * write over its answer) and no operator may confirm or release it. Decided on the caller's clock,
 * a worker or an operator machine whose clock runs ahead sees a live lease as run out, and one whose
 * clock runs behind claims a lease that is over before it starts. Leases are decided on Redis's own
 * clock (TIME in the ledger's scripts), whatever the callers' clocks say.
 */

const EJ = '7f3c2a8e-1111-4c1d-9a55-2b6f0c9e0001';
const facts = (body: string): SubmissionFacts => ({
  record: 'vat|api|INV-1',
  body,
  bodyHash: `hash of ${body}`,
  reportingPeriod: '2026-10-01',
  net: '100.00',
  vat: '19.00',
  currency: 'EUR',
});

/** A clock off by up to two hours either way (NTP broken, a VM resumed, a laptop). */
const skew = fc.integer({ min: -7_200_000, max: 7_200_000 });

describe('VAT leases follow Redis clock, not the callers', () => {
  const ctx = useRedis();
  const ledgerAt = (offset: number, leaseMs: number) =>
    createVatLedger(ctx.redis, createKeys(ctx.prefix), { leaseMs, clock: () => new Date(Date.now() + offset) });

  it('never lets a worker or an operator with a skewed clock take over or decide a live attempt', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.record({ holder: skew, worker: skew, operator: skew }), async (clocks) => {
        run += 1;
        const number = `INV-L${run}`;
        const what = JSON.stringify(clocks);
        const holder = ledgerAt(clocks.holder, 60_000);
        const claim = await holder.begin(EJ, number, facts('{"v":1}'));
        expect(claim.go, what).toBe(true);

        const worker = ledgerAt(clocks.worker, 60_000);
        expect(await worker.begin(EJ, number, facts('{"v":2}')), `${what}: another worker, same record`).toMatchObject({ go: false, state: 'busy' });
        expect(await worker.begin(EJ, number, facts(''), 'resolve'), `${what}: a resolve`).toMatchObject({ go: false, state: 'busy' });
        const operator = ledgerAt(clocks.operator, 60_000);
        for (const action of ['confirm', 'release'] as const) {
          expect(await operator.operator(EJ, number, action, 'ops'), `${what}: vat ledger ${action}`).toMatchObject({ ok: false, reason: expect.stringContaining('in flight right now') });
        }
        expect(claim.go && (await holder.settle(EJ, number, claim.token, { kind: 'confirmed', warnings: false })), `${what}: the live attempt still holds its entry`).toBe(true);
      }),
      { numRuns: 60, examples: [[{ holder: 0, worker: 3_600_000, operator: 3_600_000 }], [{ holder: -3_600_000, worker: 0, operator: 0 }]] },
    );
  });

  it('lets any worker take over once the lease ran out on Redis clock, whatever its own clock says', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.record({ holder: skew, worker: skew }), async (clocks) => {
        run += 1;
        const number = `INV-X${run}`;
        const what = JSON.stringify(clocks);
        const holder = ledgerAt(clocks.holder, 100);
        expect((await holder.begin(EJ, number, facts('{"v":1}'))).go, what).toBe(true);
        // Redis's clock passes the lease (100 ms) without anyone's clock being asked.
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(await ledgerAt(clocks.worker, 100).begin(EJ, number, facts('{"v":2}')), `${what}: the expired attempt is resent`).toMatchObject({
          go: true,
          resend: true,
          ambiguous: true,
          body: '{"v":1}',
        });
      }),
      { numRuns: 15 },
    );
  });
});
