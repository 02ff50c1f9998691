import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { createDlqDeps } from '../../src/dead-letters/open.js';
import { replayEntry } from '../../src/dead-letters/service.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { createRequeuer } from '../../src/queue/requeue.js';
import { createVatResolver } from '../../src/vat-ops/resolver.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, refundEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A version of a record can fail more than once: the VAT path runs it again on its own (a refund
 * decided again once its invoice files VAT, an open ledger entry's record re-queued by the
 * resolver). The dead-letter entry of a version has an id derived from queue, record and version,
 * so a crash between writing it and marking the version does not write it twice — but a later,
 * different failure of the same version must not vanish behind the first: BullMQ ignores an add
 * whose job id exists, so the new entry was silently dropped and the operator saw only the old one.
 */
describe('a later, different failure of a version already dead-lettered is dead-lettered too', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  it('states the correction of a refund whose invoice arrived after the refund gave up waiting for it', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const refund = vatRecord('R-LATE');
    await rig.accept(refundEvent('R-LATE', 'INV-LATE', '10.00', '1.90'));
    // Its invoice does not come within TAXSYNC_REFUND_WAIT (30 min): REFUND_ORIGINAL_MISSING.
    expect((await rig.settle(refund, 200)).kind).toBe('dead-lettered');
    expect((await rig.deadLettersOf(refund)).map((l) => l.error.code)).toEqual(['REFUND_ORIGINAL_MISSING']);

    // The invoice arrives later and files its VAT; the refund, noted against it, is decided again.
    await rig.accept(invoiceEvent('INV-LATE', 1, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-LATE'))).kind).toBe('applied');
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');

    const correction = (await rig.deadLettersOf(refund)).find((l) => l.error.code === 'VAT_CORRECTION_REQUIRED');
    // the refund takes back 10.00 net and 1.90 VAT (10.00 × 0.19), 11.90 gross, of what INV-LATE filed
    expect(correction?.error.fields, 'the correction of the refund').toMatchObject({ net: ['INV-LATE: -10.00'], vat: ['INV-LATE: -1.90'], gross: ['INV-LATE: -11.90'] });
  });

  it('drops the refund\'s missing-invoice entry once its correction is stated, so replaying it cannot state the correction twice', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const refund = vatRecord('R-LATE2');
    await rig.accept(refundEvent('R-LATE2', 'INV-LATE2', '10.00', '1.90'));
    expect((await rig.settle(refund, 200)).kind).toBe('dead-lettered');
    await rig.accept(invoiceEvent('INV-LATE2', 1, [['100.00', '0.19']]));
    expect((await rig.settle(vatRecord('INV-LATE2'))).kind).toBe('applied');
    expect((await rig.settle(refund)).kind).toBe('dead-lettered');
    // The operator corrects the filing and discards the correction, as operations.md says…
    const letters = await rig.deadLettersOf(refund);
    await rig.deadLetters.remove(letters.filter((l) => l.error.code === 'VAT_CORRECTION_REQUIRED').map((l) => l.id));
    // …and replays whatever else the refund left, as each entry's own message says.
    const deps = createDlqDeps(rig.redis, rig.queues, loadConfig({ TAXSYNC_PREFIX: ctx.prefix }), parseSettings({}));
    for (const letter of await rig.deadLettersOf(refund)) await replayEntry(deps, letter, 'ops@example.com');
    await rig.settle(refund);
    expect((await rig.deadLettersOf(refund)).map((l) => l.error.code), 'the same correction stated a second time').toEqual([]);
  });

  it('dead-letters VAT_OUTCOME_UNRESOLVED for a version first dead-lettered by a refusal that left its outcome unknown', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, unknownLimit: 2 });
    const record = vatRecord('INV-404');
    await rig.accept(invoiceEvent('INV-404', 1, [['100.00', '0.19']]));
    // The answer is lost, then a gateway answers 404 to every resend.
    rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit', times: 1 }]);
    expect((await rig.run(record)).kind).toBe('retry');
    rig.emulator.faults.set([{ kind: 'error', route: 'vat.submit', status: 404 }]);
    expect((await rig.run(record)).kind).toBe('dead-lettered');
    expect((await rig.deadLettersOf(record)).map((l) => l.error.code)).toEqual(['API_NOT_FOUND']);

    // The entry is still unknown: the resolver re-queues its record until the resends run out.
    const resolver = createVatResolver({
      ledger: rig.ledger,
      records: rig.records,
      requeuer: createRequeuer({ queues: rig.queues, records: rig.records }),
      redis: rig.redis,
      keys: rig.keys,
      intervalMs: 1_000,
      backoff: { baseMs: 1_000, capMs: 60_000 },
      clock: () => rig.now(),
    });
    for (let i = 0; i < 5; i++) {
      rig.advance(120_000);
      await rig.redis.del(`${rig.keys.prefix}:vat-resolver-lease`);
      await resolver.sweep();
      await rig.queues['vat-submissions'].remove(recordKeyString(record));
      await rig.run(record);
    }
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect(entry?.state).toBe('unresolved');
    expect((await rig.deadLettersOf(record)).map((l) => l.error.code).sort()).toEqual(['API_NOT_FOUND', 'VAT_OUTCOME_UNRESOLVED']);
  });
});
