import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClients } from '../../src/api/index.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { createRequeuer } from '../../src/queue/requeue.js';
import { createVatResolver } from '../../src/vat-ops/resolver.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * "Nothing waits forever" (docs/vat.md): when a VAT job runs out of attempts, its dead letter says
 * to do nothing for API_NETWORK / API_TIMEOUT / API_SERVER_ERROR because the resolver brings the
 * entry back. That held for entries whose outcome is unknown, not for claims released as certainly
 * not processed (a refused connection, a token the auth endpoint would not give, a 401): those are
 * `pending`, outside the resolver's index, so an outage longer than the job's attempts left the
 * invoice unfiled until someone replayed an entry the documentation says needs nothing.
 */
describe('a released VAT claim whose job is gone is brought back by the resolver', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  /** A port nothing listens on: connections are refused. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it.each([
    ['the VAT service refuses connections', 'refused'],
    ['the VAT service answers 401 to every submission', 'unauthorized'],
  ] as const)('files the invoice once the outage ends when %s for longer than the job lasts', async (_, outage) => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, attempts: 2 });
    const record = vatRecord('INV-OUT');
    await rig.accept(invoiceEvent('INV-OUT', 1, [['100.00', '0.19']]));
    const down =
      outage === 'refused'
        ? createApiClients({ taxUrl: rig.emulator.url, vatUrl: `http://127.0.0.1:${await closedPort()}`, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) })
        : undefined;
    if (outage === 'unauthorized') rig.emulator.faults.set([{ kind: 'error', route: 'vat.submit', status: 401 }]);
    const handler = down === undefined ? undefined : rig.handler({ vat: down.vat });
    let last = await rig.run(record, handler);
    for (let i = 0; i < 3 && last.kind === 'retry'; i++) last = await rig.run(record, handler);
    expect(last.kind).toBe('dead-lettered');
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect(entry?.state).toBe('pending');
    // The job is gone (BullMQ removes a failed record job).
    await rig.queues['vat-submissions'].remove(recordKeyString(record));
    await down?.close();
    rig.emulator.faults.clear();

    // The service is back; nobody replays: the resolver's sweeps bring the claim back.
    const resolver = createVatResolver({
      ledger: rig.ledger,
      records: rig.records,
      requeuer: createRequeuer({ queues: rig.queues, records: rig.records }),
      redis: rig.redis,
      keys: rig.keys,
      intervalMs: 60_000,
      backoff: { baseMs: 2_000, capMs: 3_600_000 },
      clock: () => rig.now(),
    });
    let requeued = 0;
    for (let i = 0; i < 5 && requeued === 0; i++) {
      rig.advance(600_000);
      await rig.redis.del(`${rig.keys.prefix}:vat-resolver-lease`);
      requeued += (await resolver.sweep()).requeued;
    }
    expect(requeued).toBe(1);
    expect((await rig.settle(record)).kind).toBe('applied');
    // 100.00 net at 19 % = 19.00 VAT, filed once
    expect(Object.fromEntries(rig.accepted())).toEqual({ 'INV-OUT': { net: '100.00', vat: '19.00', gross: '119.00', count: 1 } });
    expect((await rig.ledger.forRecord(recordKeyString(record)))[0]?.state).toBe('confirmed');
  });

  it('brings back a claim whose record now fails before it is sent less and less often', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, attempts: 1 });
    const record = vatRecord('INV-BAD');
    await rig.accept(invoiceEvent('INV-BAD', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([{ kind: 'error', route: 'vat.submit', status: 401 }]);
    expect((await rig.run(record)).kind).toBe('dead-lettered');
    rig.emulator.faults.clear();
    // The next version cannot be mapped (its credit line outweighs the rest: a negative net, which
    // the service cannot take): every run ends before the claim.
    await rig.accept(invoiceEvent('INV-BAD', 2, [['10.00', '0.19'], ['-50.00', '0.19']]));
    expect((await rig.run(record)).kind).toBe('dead-lettered');
    expect((await rig.deadLettersOf(record)).map((l) => l.error.code).sort()).toEqual(['API_UNAUTHORIZED', 'MAPPING_INVALID']);
    expect((await rig.ledger.forRecord(recordKeyString(record)))[0]?.state).toBe('pending');
    await rig.queues['vat-submissions'].remove(recordKeyString(record));
    const resolver = createVatResolver({
      ledger: rig.ledger,
      records: rig.records,
      requeuer: createRequeuer({ queues: rig.queues, records: rig.records }),
      redis: rig.redis,
      keys: rig.keys,
      intervalMs: 60_000,
      backoff: { baseMs: 2_000, capMs: 3_600_000 },
      clock: () => rig.now(),
    });
    // A day of sweeps, one a minute; each re-queued run fails the same way.
    let requeued = 0;
    for (let minute = 0; minute < 24 * 60; minute++) {
      rig.advance(60_000);
      await rig.redis.del(`${rig.keys.prefix}:vat-resolver-lease`);
      if ((await resolver.sweep()).requeued === 0) continue;
      requeued += 1;
      await rig.queues['vat-submissions'].remove(recordKeyString(record));
      await rig.run(record);
    }
    // Backing off towards the cap (1 h): about a dozen doublings to reach it, then hourly.
    expect(requeued).toBeGreaterThan(0);
    expect(requeued).toBeLessThan(40);
  }, 120_000);
});
