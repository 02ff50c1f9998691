import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { createVatLedger, vatLedgerStatus, type BeginResult, type SubmissionFacts } from '../../../src/queue/vat-ledger.js';
import { renderVatLedgerStatus } from '../../../src/cli/commands/status.js';
import { useRedis } from '../../helpers/redis.js';

const EJ = '7f3c2a8e-1111-4c1d-9a55-2b6f0c9e0001';
const RECORD = 'vat|api|INV-1';
const facts = (body = '{"net":"100.00"}', record = RECORD): SubmissionFacts => ({
  record,
  body,
  bodyHash: `hash of ${body}`,
  reportingPeriod: '2026-10-01',
  net: '100.00',
  vat: '19.00',
  currency: 'EUR',
});
const claimed = (result: BeginResult) => {
  if (!result.go) throw new Error(`expected a claim, got ${result.state}`);
  return result;
};

describe('VAT ledger', () => {
  const ctx = useRedis();
  const start = Date.parse('2026-11-20T10:00:00Z');
  let now = start;
  // Leases are decided on Redis's clock: moved as far as the test moves its own.
  const ledger = () => createVatLedger(ctx.redis, createKeys(ctx.prefix), { leaseMs: 1_000, clock: () => new Date(now), timeShift: () => now - start });

  it('lets one attempt go, then refuses to send a confirmed submission again', async () => {
    const l = ledger();
    const claim = claimed(await l.begin(EJ, 'INV-1', facts()));
    expect(claim).toMatchObject({ ambiguous: false, attempts: 1, resend: false, body: '{"net":"100.00"}' });
    expect(await l.settle(EJ, 'INV-1', claim.token, { kind: 'confirmed', transactionId: 't-1', warnings: false })).toBe(true);
    expect(await l.begin(EJ, 'INV-1', facts())).toMatchObject({ go: false, state: 'confirmed', entry: { transaction_id: 't-1' } });
  });

  it('says busy while another attempt holds the lease, and treats an expired lease as possibly accepted: the stored bytes go again', async () => {
    const l = ledger();
    claimed(await l.begin(EJ, 'INV-1', facts('{"v":1}')));
    expect(await l.begin(EJ, 'INV-1', facts('{"v":2}'))).toMatchObject({ go: false, state: 'busy' });
    now += 1_001;
    expect(await l.begin(EJ, 'INV-1', facts('{"v":2}'))).toMatchObject({ go: true, ambiguous: true, attempts: 2, resends: 1, resend: true, body: '{"v":1}' });
  });

  it('never replaces the body of an unknown outcome: the invoice changed, the same bytes are resent', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts('{"v":1}')));
    await l.settle(EJ, 'INV-1', first.token, { kind: 'unknown', note: 'connection reset after sending' });
    const again = claimed(await l.begin(EJ, 'INV-1', facts('{"v":2}')));
    expect(again).toMatchObject({ ambiguous: true, resend: true, body: '{"v":1}' });
    expect((await l.get(EJ, 'INV-1'))?.body).toBe('{"v":1}');
  });

  it('replaces the body of a claim that was certainly not sent (released) and is not ambiguous', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts('{"v":1}')));
    await l.settle(EJ, 'INV-1', first.token, { kind: 'released', note: 'connection refused' });
    expect(await l.begin(EJ, 'INV-1', facts('{"v":2}'))).toMatchObject({ go: true, ambiguous: false, resend: false, body: '{"v":2}' });
  });

  it('a release after an ambiguous attempt stays unknown', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts('{"v":1}')));
    await l.settle(EJ, 'INV-1', first.token, { kind: 'unknown', note: 'timeout' });
    const second = claimed(await l.begin(EJ, 'INV-1', facts()));
    await l.settle(EJ, 'INV-1', second.token, { kind: 'released', note: '429' });
    expect((await l.get(EJ, 'INV-1'))?.state).toBe('unknown');
  });

  it('refuses and counts the write of an attempt whose lease a successor took over (fencing)', async () => {
    const l = ledger();
    const stalled = claimed(await l.begin(EJ, 'INV-1', facts()));
    now += 1_001;
    const successor = claimed(await l.begin(EJ, 'INV-1', facts()));
    expect(await l.holds(EJ, 'INV-1', stalled.token)).toBe(false);
    expect(await l.settle(EJ, 'INV-1', successor.token, { kind: 'confirmed', transactionId: 't-2', warnings: false })).toBe(true);
    expect(await l.settle(EJ, 'INV-1', stalled.token, { kind: 'unknown', note: 'late timeout' })).toBe(false);
    expect(await l.get(EJ, 'INV-1')).toMatchObject({ state: 'confirmed', transaction_id: 't-2' });
    expect(await ctx.redis.hget(createKeys(ctx.prefix).counters, 'vat_fenced_writes')).toBe('1');
    expect((await l.history(EJ, 'INV-1')).map((h) => h.outcome)).toEqual(['sent', 'resent', 'confirmed', 'fenced:unknown']);
  });

  it('refuses a number claimed by another record (a collision), naming the owner', async () => {
    const l = ledger();
    claimed(await l.begin(EJ, 'INV-1', facts()));
    expect(await l.begin(EJ, 'INV-1', facts('{}', 'vat|shopify|1001'))).toMatchObject({ go: false, state: 'collision', owner: RECORD });
  });

  it('keeps a rejection of the same body; a changed body is a new try', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts('{"v":1}')));
    await l.settle(EJ, 'INV-1', first.token, { kind: 'rejected', note: '422 vat_number', code: 'API_INVALID' });
    expect(await l.begin(EJ, 'INV-1', facts('{"v":1}'))).toMatchObject({ go: false, state: 'rejected', entry: { code: 'API_INVALID' } });
    expect(await l.begin(EJ, 'INV-1', facts('{"v":2}'))).toMatchObject({ go: true, body: '{"v":2}' });
  });

  it('indexes open entries for the resolver and lets an operator confirm or release an unresolved one', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts()));
    expect(await l.due(now + 1_000, 10)).toHaveLength(1);
    await l.settle(EJ, 'INV-1', first.token, { kind: 'unresolved', note: 'no answer', code: 'VAT_OUTCOME_UNRESOLVED' });
    expect(await l.due(now + 10_000, 10)).toEqual([]);
    expect(await l.begin(EJ, 'INV-1', facts())).toMatchObject({ go: false, state: 'unresolved' });
    expect(await l.operator(EJ, 'INV-1', 'release', 'ops@example.com')).toEqual({ ok: true, from: 'unresolved' });
    expect(await l.get(EJ, 'INV-1')).toMatchObject({ state: 'pending', ambiguous: false, resends: 0 });
    expect(await l.operator(EJ, 'INV-1', 'confirm', 'ops@example.com')).toMatchObject({ ok: false });
  });

  it('withdraws a pending claim only for its own record, and lists entries by record and in total', async () => {
    const l = ledger();
    const first = claimed(await l.begin(EJ, 'INV-1', facts()));
    await l.settle(EJ, 'INV-1', first.token, { kind: 'released', note: 'not sent' });
    expect(await l.withdraw(EJ, 'INV-1', 'vat|api|OTHER')).toBe(false);
    expect(await l.forRecord(RECORD)).toHaveLength(1);
    expect(await l.withdraw(EJ, 'INV-1', RECORD)).toBe(true);
    expect(await l.forRecord(RECORD)).toEqual([]);
    const all = [];
    for await (const entry of l.entries()) all.push(entry);
    expect(all).toEqual([]);
  });

  it('status counts every open state, unresolved included (the ones that need an operator)', async () => {
    const l = ledger();
    const settle = async (number: string, outcome: Parameters<typeof l.settle>[3]) => l.settle(EJ, number, claimed(await l.begin(EJ, number, facts())).token, outcome);
    await settle('INV-U', { kind: 'unknown', note: 'timeout' });
    await settle('INV-X', { kind: 'unresolved', note: 'no answer', code: 'VAT_OUTCOME_UNRESOLVED' });
    await settle('INV-Y', { kind: 'unresolved', note: 'no answer', code: 'VAT_OUTCOME_UNRESOLVED' });
    await settle('INV-C', { kind: 'confirmed', warnings: false });
    await settle('INV-P', { kind: 'released', note: '429' });
    claimed(await l.begin(EJ, 'INV-F', facts()));
    const status = await vatLedgerStatus(l);
    expect(status).toEqual({ unknown: 1, unresolved: 2, in_flight: 1, pending: 1, attention: 0 });
    expect(renderVatLedgerStatus(status)).toMatch(/^VAT ledger: 1 unknown .*, 2 unresolved .*taxsync vat ledger confirm\|release.*, 1 in flight, 1 pending$/);
  });

  it('status counts the confirmed submissions the service will not report as they are', async () => {
    const l = ledger();
    const settle = async (number: string, outcome: Parameters<typeof l.settle>[3]) => l.settle(EJ, number, claimed(await l.begin(EJ, number, facts())).token, outcome);
    await settle('INV-A', { kind: 'confirmed', warnings: false, attention: 'committed: false' });
    await settle('INV-B', { kind: 'confirmed', warnings: true });
    const status = await vatLedgerStatus(l);
    expect(status).toMatchObject({ attention: 1 });
    expect(renderVatLedgerStatus(status)).toMatch(/; 1 filed but not reported as they are \(`taxsync vat reconcile` lists them/);
  });
});
