import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/config/settings.js';
import { vatEnabled } from '../../../src/mapping/index.js';
import { createLogger } from '../../../src/observability/logger.js';
import { ZERO_CONFIG_ENTITY, ensureRegistrations, withZeroConfigVat } from '../../../src/vat-ops/zero-config.js';
import { useEmulatorClients as useEmulator } from '../../helpers/emulator-clients.js';

const logger = createLogger({ level: 'silent' });

describe('VAT at zero configuration', () => {
  it('is on when neither TAX_API_URL nor TAXSYNC_CONFIG is set: a US seller registered in Germany', () => {
    const settings = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);
    expect(vatEnabled(settings.vat)).toBe(true);
    expect(settings.vat.seller_country).toBe('US');
    expect(settings.vat.registrations).toEqual([
      { taxable_jurisdiction: 'DE', registration_type: 'standard', entity: ZERO_CONFIG_ENTITY, country: 'DE', scheme: 'domestic' },
    ]);
    // Everything else keeps its default.
    expect({ ...settings, vat: undefined }).toEqual({ ...DEFAULT_SETTINGS, vat: undefined });
  });

  it('leaves the settings alone once a real API or a settings file is configured', () => {
    const mine = parseSettings({ sources: { erp: 'netsuite' } });
    expect(withZeroConfigVat({ usesEmulator: false, configFile: undefined }, DEFAULT_SETTINGS)).toBe(DEFAULT_SETTINGS);
    expect(withZeroConfigVat({ usesEmulator: true, configFile: 'taxsync.json' }, mine)).toBe(mine);
  });

  describe('the registration at the emulator', () => {
    const ctx = useEmulator();
    const settings = withZeroConfigVat({ usesEmulator: true, configFile: undefined }, DEFAULT_SETTINGS);

    it('is created through the VAT API when the service does not hold it, and found rather than doubled the next time', async () => {
      const [created] = await ensureRegistrations(ctx.clients.vat, settings.vat, logger);
      expect(created).toMatchObject({ registration_type: 'standard', status: 'active', taxable_jurisdiction_detail: { iso: 'DE' } });
      expect(created!.entity_jurisdiction).toEqual(expect.any(String));
      const [again] = await ensureRegistrations(ctx.clients.vat, settings.vat, logger);
      expect(again!.id).toBe(created!.id);
      expect((await ctx.clients.vat.registrations.list()).count).toBe(1);
    });

    it('is not created for settings that name registrations by UUID only (nothing to create them from)', async () => {
      const byUuid = parseSettings({ vat: { seller_country: 'DE', registrations: [{ entity_jurisdiction: '0d000000-0000-4000-8000-0000000000de', country: 'DE' }] } });
      expect(await ensureRegistrations(ctx.clients.vat, byUuid.vat, logger)).toEqual([]);
      expect((await ctx.clients.vat.registrations.list()).count).toBe(0);
    });
  });
});
