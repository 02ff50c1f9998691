import { afterEach, describe, expect, it } from 'vitest';
import type { VatClient } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { createDlqDeps } from '../../src/dead-letters/open.js';
import { replayEntry } from '../../src/dead-letters/service.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { createVatLedger } from '../../src/queue/vat-ledger.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A replay of a VAT dead letter puts the record's rejected ledger entries back to pending. It ran
 * as a read ("is it rejected?") and a separate write ("pending"), so a replay that read the entry
 * just before the record's own job claimed it for a changed body wrote "pending" over that
 * attempt while its POST was on the way: the attempt's answer was refused as fenced, the entry
 * pending with no trace of the accepted POST, and the next attempt's duplicate answer a "real
 * conflict" (VAT_DUPLICATE, rejected) for taxsync's own filing.
 *
 * The interleaving is forced, not timed: the replay's read of the entry is held until the job's
 * POST has been answered.
 */
describe('an operator replay during an attempt of the same entry', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  it('never turns an entry in flight back to pending', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const record = vatRecord('INV-RP');
    await rig.accept(invoiceEvent('INV-RP', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([{ kind: 'error', route: 'vat.submit', status: 422, times: 1 }]);
    expect((await rig.run(record)).kind).toBe('dead-lettered');
    const [letter] = await rig.deadLettersOf(record);
    const [rejected] = await rig.ledger.forRecord(recordKeyString(record));
    expect(rejected?.state).toBe('rejected');
    const entryKey = rig.keys.vatLedger(rejected!.entity_jurisdiction!, 'INV-RP');

    // The source corrects the invoice; its job will send the changed body.
    await rig.accept(invoiceEvent('INV-RP', 2, [['110.00', '0.19']]));

    // The operator's replay (--remap) reads the entry (rejected) and is held there until the POST is answered.
    let readsOfEntry = 0;
    let releaseRead!: () => void;
    const postAnswered = new Promise<void>((resolve) => (releaseRead = resolve));
    let signal!: () => void;
    const replayAtTheEntry = new Promise<void>((resolve) => (signal = resolve));
    const held = new Proxy(rig.redis, {
      get(target, property, receiver) {
        if (property === 'hgetall') {
          return async (key: string) => {
            const value = await target.hgetall(key);
            // Its first read lists the record's entries; the second is the reopen's "is it rejected?".
            if (key === entryKey && ++readsOfEntry === 2) {
              signal();
              await postAnswered;
            }
            return value;
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const config = loadConfig({ TAXSYNC_PREFIX: ctx.prefix });
    const deps = { ...createDlqDeps(rig.redis, rig.queues, config, parseSettings({})), ledger: createVatLedger(held, rig.keys, { leaseMs: 60_000 }) };
    const replay = replayEntry(deps, letter!, 'ops@example.com', { remap: true });
    await Promise.race([replayAtTheEntry, replay]);

    const vat: VatClient = {
      ...rig.api.vat,
      async submitTransaction(body) {
        const answer = await rig.api.vat.submitTransaction(body);
        // Accepted. The replay's write lands now, before the attempt writes its answer.
        releaseRead();
        await replay;
        return answer;
      },
    };
    const handler = rig.handler({ vat });
    let result = await rig.run(record, handler);
    for (let i = 0; i < 5 && result.kind !== 'applied'; i++) {
      rig.advance(120_000);
      result = await rig.run(record, handler);
    }
    await replay;

    // 110.00 net at 19 % = 20.90 VAT, filed once, and the ledger knows it.
    expect(Object.fromEntries(rig.accepted())).toEqual({ 'INV-RP': { net: '110.00', vat: '20.90', gross: '130.90', count: 1 } });
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect(entry?.state).toBe('confirmed');
    expect((await rig.deadLettersOf(record)).map((l) => l.error.code)).not.toContain('VAT_DUPLICATE');
  });
});
