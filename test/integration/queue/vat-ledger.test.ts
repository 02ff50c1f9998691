import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { createVatLedger } from '../../../src/queue/vat-ledger.js';
import { useRedis } from '../../helpers/redis.js';

const EJ = '7f3c2a8e-1111-4c1d-9a55-2b6f0c9e0001';
const facts = { record: 'vat|api|INV-1', body: '{}', bodyHash: 'h1', reportingPeriod: '2026-11-01', net: '100.00', vat: '19.00', currency: 'EUR' };

describe('VAT ledger', () => {
  const ctx = useRedis();
  const ledger = (now = () => new Date()) => createVatLedger(ctx.redis, createKeys(ctx.prefix), { leaseMs: 1_000, clock: now });

  it('lets one attempt go, then refuses to send a confirmed submission again', async () => {
    const l = ledger();
    expect(await l.begin(EJ, 'INV-1', facts)).toEqual({ go: true, ambiguous: false, attempts: 1 });
    await l.confirm(EJ, 'INV-1', { transactionId: 't-1', warnings: false });
    expect(await l.begin(EJ, 'INV-1', facts)).toMatchObject({ go: false, state: 'confirmed', entry: { transaction_id: 't-1' } });
  });

  it('says busy while another attempt holds the lease, and treats an expired lease as possibly accepted', async () => {
    let now = Date.parse('2026-11-20T10:00:00Z');
    const l = ledger(() => new Date(now));
    await l.begin(EJ, 'INV-1', facts);
    expect(await l.begin(EJ, 'INV-1', facts)).toMatchObject({ go: false, state: 'busy' });
    now += 1_001;
    expect(await l.begin(EJ, 'INV-1', facts)).toEqual({ go: true, ambiguous: true, attempts: 2 });
  });

  it('remembers an answer that was lost, so a later duplicate means accepted', async () => {
    const l = ledger();
    await l.begin(EJ, 'INV-1', facts);
    await l.markUnknown(EJ, 'INV-1', 'connection reset after sending');
    expect(await l.begin(EJ, 'INV-1', facts)).toEqual({ go: true, ambiguous: true, attempts: 2 });
  });

  it('does not mark a refusal before sending as ambiguous', async () => {
    const l = ledger();
    await l.begin(EJ, 'INV-1', facts);
    await l.release(EJ, 'INV-1', 'connection refused');
    expect(await l.begin(EJ, 'INV-1', facts)).toEqual({ go: true, ambiguous: false, attempts: 2 });
  });

  it('keeps a rejection until an operator reopens it', async () => {
    const l = ledger();
    await l.begin(EJ, 'INV-1', facts);
    await l.reject(EJ, 'INV-1', '422 net must be positive');
    expect(await l.begin(EJ, 'INV-1', facts)).toMatchObject({ go: false, state: 'rejected' });
    expect(await l.reopen(EJ, 'INV-1')).toBe(true);
    expect(await l.begin(EJ, 'INV-1', facts)).toMatchObject({ go: true });
    const all = [];
    for await (const entry of l.entries()) all.push(entry);
    expect(all).toHaveLength(1);
    expect(await l.forRecord('vat|api|INV-1')).toHaveLength(1);
  });
});
