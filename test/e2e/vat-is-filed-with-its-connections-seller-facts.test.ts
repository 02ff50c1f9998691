import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { vatSettingsFor } from '../../src/mapping/vat-settings.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A VAT submission is made with the seller facts of the connection its invoice came from
 * (docs/connections.md, "VAT"): its invoice-number prefix here. An invoice of a connection no
 * longer configured has no seller facts to file under: it is dead-lettered, never filed under the
 * installation's defaults.
 */
describe("an invoice's VAT and its connection", () => {
  const ctx = useRedis();
  let rig: VatRig;
  beforeEach(async () => {
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
  });
  afterEach(async () => {
    await rig.close();
  });

  it("is numbered with the connection's invoice-number prefix", async () => {
    const handler = rig.handler({ settingsFor: (connector) => (connector === 'erp' ? vatSettingsFor(rig.settings, 'api', { invoiceNumberPrefix: 'B-' }) : undefined) });
    await rig.accept(invoiceEvent('INV-7', 1, [['100.00', '0.19']]));
    expect((await rig.run(vatRecord('INV-7'), handler)).kind).toBe('applied');
    // 100.00 at 19%: 19.00 VAT, 119.00 gross, once, under B-INV-7.
    expect([...rig.accepted()]).toEqual([['B-INV-7', { net: '100.00', vat: '19.00', gross: '119.00', count: 1 }]]);
  });

  it('is dead-lettered, and nothing filed, when its connection is no longer configured', async () => {
    const handler = rig.handler({ settingsFor: () => undefined });
    await rig.accept(invoiceEvent('INV-8', 1, [['100.00', '0.19']]));
    expect((await rig.run(vatRecord('INV-8'), handler)).kind).toBe('dead-lettered');
    const [entry] = await rig.deadLettersOf(vatRecord('INV-8'));
    expect(entry?.error.code).toBe('MAPPING_INVALID');
    expect(entry?.error.message).toContain('its connection "erp" is not configured');
    expect(rig.accepted().size).toBe(0);
  });
});
