import { describe, expect, it } from 'vitest';
import { connectionAges } from '../../../src/activity/silence.js';
import { loadConfig } from '../../../src/config/index.js';
import { loadConnections } from '../../../src/config/connections.js';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import { twoShops } from '../../helpers/two-shops.js';

/**
 * Silence per connection, from what the activity store holds: each connection's own last event,
 * and the per-source fields an installation wrote before connections, read as the connection that
 * now writes that source's unprefixed records until it has its own.
 */

const NOW = new Date(Date.UTC(2026, 10, 25, 12, 0, 0));
const HOUR = 3_600_000;
const SIX_HOURS = 6 * HOUR;
const ago = (ms: number) => NOW.getTime() - ms;
const row = (r: { id: string; last_event_at: string | null; silent: boolean }) => `${r.id} ${r.last_event_at === null ? 'never' : 'sent'}${r.silent ? ' SILENT' : ''}`;

describe('connection silence', () => {
  const { connections } = twoShops();

  it('gives two shops of one source each their own last event and silence, prefix and platform', () => {
    const recorded = { byConnection: { 'shop-de': String(ago(7 * HOUR)), 'shop-fr': String(ago(5 * 60_000)) }, bySource: {} };
    expect(connectionAges(recorded, connections, NOW, SIX_HOURS)).toEqual([
      { id: 'shop-de', platform: 'woocommerce', source: 'woocommerce', last_event_at: new Date(ago(7 * HOUR)).toISOString(), age_s: 7 * 3600, silent: true },
      { id: 'shop-fr', platform: 'woocommerce', source: 'woocommerce', prefix: 'fr-', last_event_at: new Date(ago(5 * 60_000)).toISOString(), age_s: 300, silent: false },
    ]);
  });

  it('lists an active connection that never sent as never having sent, after the ones that did, and never silent', () => {
    const recorded = { byConnection: { 'shop-fr': String(ago(HOUR)) }, bySource: {} };
    expect(connectionAges(recorded, connections, NOW, SIX_HOURS).map(row)).toEqual(['shop-fr sent', 'shop-de never']);
  });

  it("reads a field written before connections as its successor's until the successor has its own", () => {
    // Before connections, the one WooCommerce shop's events were keyed 'woocommerce': shop-de now writes its unprefixed records.
    const old = { byConnection: {}, bySource: { woocommerce: String(ago(7 * HOUR)) } };
    expect(connectionAges(old, connections, NOW, SIX_HOURS).map(row)).toEqual(['shop-de sent SILENT', 'shop-fr never']);
    const sentSince = { ...old, byConnection: { 'shop-de': String(ago(60_000)) } };
    expect(connectionAges(sentSince, connections, NOW, SIX_HOURS).map(row)).toEqual(['shop-de sent', 'shop-fr never']);
  });

  it('reads the ERP\'s old "api" field as the "erp" connection in an installation of default connections', () => {
    const env = { ERP_WEBHOOK_SECRET: 'whsec_ZXJwLWRlZmF1bHQtc2VjcmV0LTMyLWJ5dGVzIQ==' };
    const defaults = loadConnections(loadConfig(env), DEFAULT_SETTINGS, env);
    const ages = connectionAges({ byConnection: {}, bySource: { api: String(ago(7 * HOUR)) } }, defaults, NOW, SIX_HOURS);
    expect(ages).toEqual([{ id: 'erp', platform: 'erp', source: 'api', last_event_at: new Date(ago(7 * HOUR)).toISOString(), age_s: 7 * 3600, silent: true }]);
  });

  it('drops what no configured connection can send again, so nothing stays SILENT forever', () => {
    const recorded = {
      // A connection removed from the file, and a source whose unprefixed records no active connection writes.
      byConnection: { 'shop-gone': String(ago(30 * HOUR)) },
      bySource: { stripe: String(ago(30 * HOUR)) },
    };
    expect(connectionAges(recorded, connections, NOW, SIX_HOURS).map(row)).toEqual(['shop-de never', 'shop-fr never']);
  });
});
