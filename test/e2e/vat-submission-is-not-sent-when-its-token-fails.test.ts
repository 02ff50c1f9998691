import { afterEach, describe, expect, it } from 'vitest';
import type { VatTransactionRequest } from '../../src/api/index.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';
import { useRedis } from '../helpers/redis.js';

// A submission that cannot get a token never left taxsync: whatever the token endpoint answers
// (a 503, a login page with 200), the ledger must hold it as not sent — never "accepted" (it would
// never be filed) and never "maybe sent" (a later duplicate-number answer would then be read as
// its own earlier acceptance, hiding a real conflict). The submission itself is refused 401 first
// (the emulator expires its token), so the client renews while the submission waits.
describe('a VAT submission whose token cannot be had is not sent', () => {
  const ctx = useRedis();
  let rig: VatRig;
  afterEach(async () => {
    await rig.close();
  });

  const submissions = () => rig.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit');

  it('is never settled as accepted when the token endpoint answers 200 with a login page, and is submitted once it answers', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const record = vatRecord('INV-40');
    await rig.accept(invoiceEvent('INV-40', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([
      { kind: 'expire_token', route: 'vat.submit', times: 1 },
      { kind: 'answer', route: 'auth.token', status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Sign in</body></html>', times: 1 },
    ]);

    const first = await rig.run(record);

    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    expect(entry?.state).not.toBe('confirmed');
    expect(first.kind).not.toBe('applied');
    // The one request that reached the VAT service was refused 401: nothing was accepted.
    expect(submissions().map((e) => e.status)).toEqual([401]);

    // Once the token endpoint answers, a replay submits the invoice, once.
    rig.emulator.faults.clear();
    await rig.records.reopen(record);
    expect((await rig.settle(record)).kind).toBe('applied');
    expect(rig.accepted().get('INV-40')).toMatchObject({ count: 1, net: '100.00', vat: '19.00' });
  });

  it('is not an unknown outcome when the token endpoint fails, so a number another system holds is a conflict, not its own acceptance', async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    const record = vatRecord('INV-41');
    await rig.accept(invoiceEvent('INV-41', 1, [['100.00', '0.19']]));
    rig.emulator.faults.set([
      { kind: 'expire_token', route: 'vat.submit', times: 1 },
      { kind: 'error', route: 'auth.token', status: 503, times: 1 },
    ]);

    expect((await rig.run(record)).kind).toBe('retry');
    const [entry] = await rig.ledger.forRecord(recordKeyString(record));
    // Certainly not processed: the only request that reached the service was refused 401.
    expect(submissions().map((e) => e.status)).toEqual([401]);
    expect(entry).toMatchObject({ state: 'pending', ambiguous: false });

    // Another system (a second store, an ERP reusing numbers) holds that invoice number.
    const taken = JSON.parse(entry!.body!) as VatTransactionRequest;
    await rig.api.vat.submitTransaction({ ...taken, partner_name: 'Someone Else Ltd', net: '10.00', vat: '1.90', gross: '11.90' });

    expect((await rig.settle(record)).kind).toBe('dead-lettered');
    const [after] = await rig.ledger.forRecord(recordKeyString(record));
    expect(after?.state).toBe('rejected');
    expect((await rig.deadLettersOf(record)).map((l) => l.error.code)).toEqual(['VAT_DUPLICATE']);
  });
});
