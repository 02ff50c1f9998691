import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedis, whenReady } from '../../../src/queue/connection.js';
import { createKeys } from '../../../src/queue/keys.js';
import { createVatClaims } from '../../../src/queue/vat-claims.js';
import { createVatLedger, type BeginResult, type SubmissionFacts } from '../../../src/queue/vat-ledger.js';
import { useRedis } from '../../helpers/redis.js';

/**
 * The ledger's claims are confirmed durable (TAXSYNC_ACK_DURABILITY) on a connection of their
 * own before a claim is answered `go` (src/queue/vat-claims.ts); one that cannot be confirmed is
 * released unsent. The end-to-end proof (a failover, a crash) is
 * test/e2e/vat-a-claim-is-durable-before-its-post.test.ts.
 */

const EJ = '7f3c2a8e-1111-4c1d-9a55-2b6f0c9e0001';
const facts = (body = '{"net":"100.00"}'): SubmissionFacts => ({
  record: 'vat|api|INV-1',
  body,
  bodyHash: `hash of ${body}`,
  reportingPeriod: '2026-10-01',
  net: '100.00',
  vat: '19.00',
  currency: 'EUR',
});

/** The names of the commands a connection sends. */
function spy(connection: Redis): string[] {
  const sent: string[] = [];
  const send = connection.sendCommand.bind(connection);
  connection.sendCommand = (command, stream) => {
    sent.push(command.name === 'info' ? `info ${String(command.args[0])}` : command.name);
    return send(command, stream);
  };
  return sent;
}

describe('VAT claims', () => {
  const ctx = useRedis();
  const opened: Redis[] = [];
  afterEach(() => {
    for (const c of opened.splice(0)) c.disconnect();
  });
  async function connection(): Promise<Redis> {
    const c = createRedis(ctx.url, 'worker');
    opened.push(c);
    await whenReady(c);
    return c;
  }

  it('writes and confirms a claim on its own connection, never on the shared one', async () => {
    const shared = await connection();
    const own = await connection();
    const claims = createVatClaims(own, { mode: 'aof', timeoutMs: 2_000, slotKey: `${ctx.prefix}:counters` });
    await claims.ready();
    const onShared = spy(shared);
    const onOwn = spy(own);
    const ledger = createVatLedger(shared, createKeys(ctx.prefix), { leaseMs: 60_000, claims });

    const results = await Promise.all(['INV-1', 'INV-2', 'INV-3'].map((n) => ledger.begin(EJ, n, facts())));

    expect(results.map((r) => r.go)).toEqual([true, true, true]);
    expect(onShared.filter((c) => /^(eval|evalsha|waitaof|wait|info persistence)$/.test(c))).toEqual([]);
    expect(onOwn.filter((c) => c === 'eval')).toHaveLength(3);
    // Redis ≥ 7.2 and Valkey: WAITAOF; Redis 7.0: INFO persistence (the test's Redis has AOF on).
    expect(onOwn.some((c) => c === 'waitaof' || c === 'info persistence')).toBe(true);
  });

  it('releases a claim it cannot confirm, unsent, and says so (REDIS_NOT_DURABLE, retryable)', async () => {
    const shared = await connection();
    // No replica answers WAIT 1: nothing can be confirmed.
    const claims = createVatClaims(await connection(), { mode: 'replica', timeoutMs: 50, slotKey: `${ctx.prefix}:counters` });
    const ledger = createVatLedger(shared, createKeys(ctx.prefix), { leaseMs: 60_000, claims });

    await expect(ledger.begin(EJ, 'INV-1', facts())).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE', retryable: true });

    expect(await ledger.get(EJ, 'INV-1')).toMatchObject({ state: 'pending', ambiguous: false, note: expect.stringMatching(/^not sent: the claim could not be confirmed durable/) });
    expect((await ledger.history(EJ, 'INV-1')).map((h) => h.outcome)).toEqual(['sent', 'released:pending']);
  });

  it('leaves an unknown outcome unknown when its resend cannot be made durable, without counting that resend', async () => {
    const shared = await connection();
    const keys = createKeys(ctx.prefix);
    const plain = createVatLedger(shared, keys, { leaseMs: 60_000 });
    const first = (await plain.begin(EJ, 'INV-1', facts())) as Extract<BeginResult, { go: true }>;
    await plain.settle(EJ, 'INV-1', first.token, { kind: 'unknown', note: 'timed out' });
    const claims = createVatClaims(await connection(), { mode: 'replica', timeoutMs: 50, slotKey: `${ctx.prefix}:counters` });
    const ledger = createVatLedger(shared, keys, { leaseMs: 60_000, claims });

    await expect(ledger.begin(EJ, 'INV-1', facts(), 'resolve')).rejects.toMatchObject({ code: 'REDIS_NOT_DURABLE' });

    expect(await ledger.get(EJ, 'INV-1')).toMatchObject({ state: 'unknown', ambiguous: true, resends: 0 });
  });
});
