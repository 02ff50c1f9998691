import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordKeyString } from '../../src/domain/record-key.js';
import { buildCli, spawnCli } from '../helpers/cli.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

// `taxsync vat ledger show|confirm|release` as an operator runs it: the built CLI on the daemon's
// Redis, after a submission's outcome could not be settled (VAT_OUTCOME_UNRESOLVED).
describe('taxsync vat ledger', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let main: string;

  beforeEach(async () => {
    main = await buildCli();
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix, unknownLimit: 1 });
  });
  afterEach(async () => {
    await rig.close();
  });

  const cli = async (...args: string[]) => {
    const run = spawnCli(main, ['vat', 'ledger', ...args], { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'silent' });
    const { code } = await run.exited;
    return { code, output: run.output() };
  };

  it('shows an unresolved entry with its attempts, confirms it once, and refuses to decide it twice', async () => {
    const record = vatRecord('INV-40');
    await rig.accept(invoiceEvent('INV-40', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([{ kind: 'drop', route: 'vat.submit' }]);
    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    const ej = entry!.entity_jurisdiction!;

    const shown = await cli('show', ej, 'INV-40', '--json');
    expect(shown.code).toBe(0);
    const view = JSON.parse(shown.output) as { entry: { state: string; body_hash: string }; history: { outcome: string }[] };
    expect(view.entry).toMatchObject({ state: 'unresolved', body_hash: entry!.body_hash });
    expect(view.history.map((h) => h.outcome)).toEqual(['sent', 'unknown', 'resent', 'unresolved']);

    const confirmed = await cli('confirm', ej, 'INV-40', '--actor', 'ops@example.com', '--json');
    expect(confirmed.code).toBe(0);
    expect(JSON.parse(confirmed.output)).toMatchObject({ ok: true, from: 'unresolved', to: 'confirmed', replayed: [{ outcome: 'replayed' }] });
    expect(await rig.ledger.get(ej, 'INV-40')).toMatchObject({ state: 'confirmed', note: 'confirmed by ops@example.com after checking the filing' });
    expect(await rig.deadLettersOf(record)).toEqual([]);
    // The replayed version runs: filed and unchanged, nothing sent.
    rig.emulator.faults.clear();
    expect((await rig.settle(record)).kind).toBe('applied');

    const again = await cli('release', ej, 'INV-40');
    expect(again.code).toBe(1);
    expect(again.output.trim().split('\n')).toHaveLength(1);
    expect(again.output).toMatch(/the entry is confirmed: only an unknown or unresolved outcome needs an operator/);
    expect((await cli('show', ej, 'NOPE')).code).toBe(1);
  }, 120_000);
});
