import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { createRequeuer } from '../../src/queue/requeue.js';
import { createDlqDeps } from '../../src/dead-letters/open.js';
import { decideLedgerEntry, showLedgerEntry } from '../../src/vat-ops/ledger-commands.js';
import { createVatResolver } from '../../src/vat-ops/resolver.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';
import { useRedis } from '../helpers/redis.js';

// Nothing waits forever (issue 15): an unknown outcome whose job is gone is found by the resolver's
// sweep; one that never settles is dead-lettered VAT_OUTCOME_UNRESOLVED after the limit, with what
// the operator needs, and `taxsync vat ledger confirm|release` closes it.
describe('unknown VAT outcomes are resolved, or dead-lettered for an operator', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  it('finds an unknown whose job is gone, re-queues its record, and the resend of the same body settles it', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, attempts: 1 });
    const record = vatRecord('INV-20');
    await rig.accept(invoiceEvent('INV-20', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit', times: 1 }]);
    // Out of attempts at the first failure: the job dead-letters and goes, the entry stays unknown.
    expect((await rig.run(record)).kind).toBe('dead-lettered');
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect(entry?.state).toBe('unknown');
    const queue = rig.queues['vat-submissions'];
    await queue.remove(recordKeyString(record));
    expect(await queue.getJob(recordKeyString(record))).toBeUndefined();

    const resolver = createVatResolver({
      ledger: rig.ledger,
      records: rig.records,
      requeuer: createRequeuer({ queues: rig.queues, records: rig.records }),
      redis: rig.redis,
      keys: rig.keys,
      intervalMs: 30_000,
      backoff: { baseMs: 1_000, capMs: 60_000 },
      clock: () => rig.now(),
    });
    expect(await resolver.sweep()).toEqual({ busy: false, requeued: 0, postponed: 0 });
    rig.advance(61_000);
    expect(await resolver.sweep()).toEqual({ busy: true, requeued: 0, postponed: 0 });
    await rig.redis.del(`${rig.keys.prefix}:vat-resolver-lease`);
    expect(await resolver.sweep()).toEqual({ busy: false, requeued: 1, postponed: 0 });
    expect(await queue.getJob(recordKeyString(record))).toBeDefined();

    expect((await rig.run(record)).kind).toBe('applied');
    const [after] = await rig.ledger.forRecord(recordKeyString(record));
    expect(after).toMatchObject({ state: 'confirmed', body: entry?.body, note: expect.stringMatching(/duplicate answer/) });
    expect(rig.accepted().get('INV-20')).toMatchObject({ count: 1 });
  });

  it('dead-letters an outcome that never settles as VAT_OUTCOME_UNRESOLVED after the limit; an operator confirm puts the invoice back to work', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, unknownLimit: 2 });
    const record = vatRecord('INV-21');
    await rig.accept(invoiceEvent('INV-21', 1, [['100.00', '0.19']]));
    // Every request is processed and its answer lost.
    rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit' }]);
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    // The first attempt and 2 resends, then an operator decides.
    expect(entry).toMatchObject({ state: 'unresolved', attempts: 3, resends: 2 });
    expect(await rig.ledger.due(rig.now() + 86_400_000, 10)).toEqual([]);
    const [letter] = await rig.deadLettersOf(record);
    expect(letter?.error.code).toBe('VAT_OUTCOME_UNRESOLVED');
    for (const part of ['INV-21', entry!.entity_jurisdiction!, entry!.body_hash!, 'taxsync vat ledger confirm', 'taxsync vat ledger release', 'vat filings boxes']) {
      expect(letter?.error.message).toContain(part);
    }

    // A change that arrives meanwhile is not sent: the outcome of what was sent decides first.
    await rig.accept(invoiceEvent('INV-21', 2, [['80.00', '0.19']]));
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    expect(rig.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit')).toHaveLength(3);

    // The operator finds INV-21 in the filing's boxes and confirms it.
    rig.emulator.faults.clear();
    const deps = createDlqDeps(rig.redis, rig.queues, loadConfig({ TAXSYNC_PREFIX: ctx.prefix }), parseSettings({ vat: { seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }] } }));
    const decided = await decideLedgerEntry(deps, entry!.entity_jurisdiction!, 'INV-21', 'confirm', 'ops@example.com');
    expect(decided).toMatchObject({ ok: true, from: 'unresolved', to: 'confirmed' });
    expect(decided.ok && decided.replayed.map((r) => r.outcome).sort()).toEqual(['replayed', 'superseded']);
    expect((await showLedgerEntry(deps, entry!.entity_jurisdiction!, 'INV-21'))?.history.at(-1)).toMatchObject({ outcome: 'operator:confirm', note: 'ops@example.com' });

    // The change that waited is now handled: filed 100.00, now 80.00.
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const letters = await rig.deadLettersOf(record);
    expect(letters.map((l) => l.error.code)).toEqual(['VAT_CORRECTION_REQUIRED']);
    expect(letters[0]?.error.fields).toMatchObject({ net: ['INV-21: -20.00'], vat: ['INV-21: -3.80'] });
    expect(await decideLedgerEntry(deps, entry!.entity_jurisdiction!, 'INV-21', 'release', 'ops')).toMatchObject({ ok: false });
  });
});
