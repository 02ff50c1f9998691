import { describe, expect, it } from 'vitest';
import { reconcileConnection, selectionOf } from '../../../src/reconcile/scope.js';
import { emptySummary, renderReport, type Report } from '../../../src/reconcile/report.js';
import { twoShops } from '../../helpers/two-shops.js';

/** Which records a reconcile run compares: a connection's own (its source, the ids its prefix claims), or whole sources. */
describe('the records a reconcile run compares', () => {
  const { connections } = twoShops();
  const de = reconcileConnection(connections, connections.get('shop-de')!);
  const fr = reconcileConnection(connections, connections.get('shop-fr')!);

  it("gives each shop of a shared source only its own ids: the longest prefix that fits decides", () => {
    const ids = ['1001', 'fr-1001', 'fr-', 'FR-1001'];
    expect(ids.filter((id) => selectionOf({ connection: de }).has('woocommerce', id))).toEqual(['1001', 'FR-1001']);
    expect(ids.filter((id) => selectionOf({ connection: fr }).has('woocommerce', id))).toEqual(['fr-1001', 'fr-']);
    expect(selectionOf({ connection: fr }).has('shopify', 'fr-1001')).toBe(false);
    expect([...selectionOf({ connection: fr }).sources!]).toEqual(['woocommerce']);
  });

  it('keeps whole sources without a connection, and every source without either', () => {
    expect(selectionOf({ sources: ['woocommerce'] }).has('woocommerce', 'fr-1001')).toBe(true);
    expect(selectionOf({ sources: ['woocommerce'] }).has('api', 'inv-1')).toBe(false);
    expect(selectionOf({}).sources).toBeUndefined();
    expect(selectionOf({}).has('api', 'inv-1')).toBe(true);
  });

  it('names the connection in the report, its prefix when it has one', () => {
    const report: Report = { v: 1, run_id: 'r', since: null, sources: ['woocommerce'], started_at: '', finished_at: '', resumed: false, summary: emptySummary(), findings: [], matches: true };
    expect(renderReport({ ...report, connection: { id: 'shop-fr', external_id_prefix: 'fr-' } }).split('\n')[0]).toBe('reconcile all records (connection shop-fr: source woocommerce, prefix fr-)');
    expect(renderReport({ ...report, connection: { id: 'shop-de', external_id_prefix: '' } }).split('\n')[0]).toBe('reconcile all records (connection shop-de: source woocommerce)');
    expect(renderReport(report).split('\n')[0]).toBe('reconcile all records (sources woocommerce)');
  });
});
