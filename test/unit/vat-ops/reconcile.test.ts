import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../src/queue/vat-ledger.js';
import { parseLedgerKey, parseReportingPeriod, reconcile, renderReconcile, type KeyedLedgerEntry } from '../../../src/vat-ops/reconcile.js';

const EJ = '0d000000-0000-4000-8000-0000000000de';
const EJ2 = '0d000000-0000-4000-8000-0000000000a7';

function entry(invoice: string, fields: Partial<LedgerEntry> = {}, ej = EJ): KeyedLedgerEntry {
  return {
    entity_jurisdiction: ej,
    invoice_number: invoice,
    entry: { state: 'confirmed', ambiguous: false, attempts: 1, resends: 0, reporting_period: '2025-01-01', net: '100.00', vat: '19.00', currency: 'EUR', ...fields },
  };
}

function boxes(net: string, vat: string, count: number, currency = 'EUR') {
  const b = (n: string, value: string) => ({ box_number: n, description: `box ${n}`, value, currency });
  return {
    boxes: [b('1', vat), b('2', '0.00'), b('3', vat), b('4', '0.00'), b('5', vat), b('6', net), b('7', '0.00'), b('8', '0.00'), b('9', String(count))],
    total_vat_due: vat,
    reporting_period: '2025-01-01/2025-03-31',
  };
}

describe('parseReportingPeriod', () => {
  it('reads months and quarters', () => {
    expect(parseReportingPeriod('2025-02')).toEqual({ label: '2025-02', start: '2025-02-01', end: '2025-02-28' });
    expect(parseReportingPeriod('2024-02').end).toBe('2024-02-29');
    expect(parseReportingPeriod('2025-q4')).toEqual({ label: '2025-Q4', start: '2025-10-01', end: '2025-12-31' });
    expect(parseReportingPeriod('2025-Q1')).toEqual({ label: '2025-Q1', start: '2025-01-01', end: '2025-03-31' });
  });
  it('refuses anything else', () => {
    for (const bad of ['2025', '2025-13', '2025-Q5', '2025-01-01', 'Q1-2025']) expect(() => parseReportingPeriod(bad)).toThrow(/neither YYYY-MM nor YYYY-Qn/);
  });
});

describe('parseLedgerKey', () => {
  it('splits a ledger key, decoding the invoice number', () => {
    expect(parseLedgerKey(`{taxsync}:vat:${EJ}:${encodeURIComponent('INV-1 (19.00% standard)')}`)).toEqual({
      entity_jurisdiction: EJ,
      invoice_number: 'INV-1 (19.00% standard)',
    });
    expect(parseLedgerKey(`{a:b}:vat:${EJ}:${encodeURIComponent('A:B')}`)?.invoice_number).toBe('A:B');
    expect(parseLedgerKey('{taxsync}:other:x')).toBeUndefined();
  });
});

describe('reconcile', () => {
  const period = parseReportingPeriod('2025-Q1');

  it('sums confirmed entries of the period exactly, per currency and entity jurisdiction', () => {
    const report = reconcile({
      period,
      entries: [
        entry('A', { net: '0.10', vat: '0.02' }),
        entry('B', { net: '0.20', vat: '0.04', reporting_period: '2025-03-01' }),
        entry('C', { currency: 'GBP', net: '10.00', vat: '2.00' }, EJ2),
        entry('OLD', { reporting_period: '2024-10-01' }),
        entry('LATER', { reporting_period: '2025-04-01' }),
        entry('P', { state: 'pending' }),
        entry('U', { state: 'unknown', note: 'timeout' }),
        entry('F', { state: 'in_flight' }),
        entry('R', { state: 'rejected', note: 'API_INVALID' }),
      ],
    });
    expect(report.ledger.confirmed).toMatchObject({ count: 3, net: '10.30', vat: '2.06' });
    expect(report.ledger.confirmed.by_currency).toEqual([
      { currency: 'EUR', count: 2, net: '0.30', vat: '0.06' },
      { currency: 'GBP', count: 1, net: '10.00', vat: '2.00' },
    ]);
    expect(report.ledger.confirmed.by_entity_jurisdiction).toEqual([
      { entity_jurisdiction: EJ2, currency: 'GBP', count: 1, net: '10.00', vat: '2.00' },
      { entity_jurisdiction: EJ, currency: 'EUR', count: 2, net: '0.30', vat: '0.06' },
    ]);
    expect(report.ledger.uncertain.map((o) => `${o.invoice_number}:${o.state}`)).toEqual(['F:in_flight', 'P:pending', 'U:unknown']);
    expect(report.ledger.rejected.map((o) => o.invoice_number)).toEqual(['R']);
    expect(report.matches).toBeUndefined();
    expect(report.differences).toEqual([]);
  });

  it('matches a filing whose boxes agree', () => {
    const report = reconcile({
      period,
      entries: [entry('A'), entry('B', { net: '50.50', vat: '9.60' })],
      filing: { id: 'f1', currency: 'EUR', entity_jurisdiction: EJ, boxes: boxes('150.50', '28.60', 2) },
    });
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(true);
    expect(report.compared).toMatchObject({ count: 2, net: '150.50', vat: '28.60' });
    expect(renderReconcile(report)).toContain('MATCH');
  });

  it('names what differs: a confirmed entry the filing lacks, a box total', () => {
    const missing = reconcile({
      period,
      entries: [entry('A'), entry('B')],
      filing: { id: 'f1', currency: 'EUR', entity_jurisdiction: EJ, boxes: boxes('100.00', '19.00', 1) },
    });
    expect(missing.matches).toBe(false);
    expect(missing.differences.map((d) => [d.field, d.ledger, d.filing, d.difference])).toEqual([
      ['count', '2', '1', '-1'],
      ['net', '200.00', '100.00', '-100.00'],
      ['vat', '38.00', '19.00', '-19.00'],
    ]);

    const vatOff = reconcile({
      period,
      entries: [entry('A')],
      filing: { id: 'f1', currency: 'EUR', entity_jurisdiction: EJ, boxes: boxes('100.00', '19.01', 1) },
    });
    expect(vatOff.differences).toEqual([expect.objectContaining({ field: 'vat', ledger: '19.00', filing: '19.01', difference: '0.01' })]);
    expect(renderReconcile(vatOff)).toContain('DIFFERENT');
  });

  it("compares only the filing's entity jurisdiction and currency, and says what it left out", () => {
    const report = reconcile({
      period,
      entries: [entry('A'), entry('X', {}, EJ2), entry('G', { currency: 'GBP' })],
      filing: { id: 'f1', currency: 'EUR', entity_jurisdiction: EJ, boxes: boxes('100.00', '19.00', 1) },
    });
    expect(report.compared).toMatchObject({ count: 1, entity_jurisdiction: EJ, currency: 'EUR' });
    expect(report.differences.map((d) => d.field)).toEqual(['currency']);
  });

  it('is uncertain while a submission of the filing is still open, even when the totals agree', () => {
    const report = reconcile({
      period,
      entries: [entry('A'), entry('U', { state: 'unknown' })],
      filing: { id: 'f1', currency: 'EUR', entity_jurisdiction: EJ, boxes: boxes('100.00', '19.00', 1) },
    });
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(false);
    expect(renderReconcile(report)).toContain('UNCERTAIN');
  });

  it('reports a box the layout expects but the return lacks', () => {
    const report = reconcile({
      period,
      entries: [entry('A')],
      filing: { id: 'f1', currency: 'EUR', boxes: { boxes: [{ box_number: '1', value: '19.00' }] } },
      layout: { net: ['6'], vat: ['1'] },
    });
    // The net's box is missing: that is the difference, not a net of 0.00 against the ledger's 100.00.
    expect(report.differences.map((d) => d.message)).toEqual(['the draft return has no box 6']);
    expect(report.filing?.totals).toEqual({ count: undefined, net: undefined, vat: '19.00' });
    expect(report.matches).toBe(false);
  });

  it('reports a box whose value cannot be read, never reading it as 0.00', () => {
    const report = reconcile({
      period,
      entries: [entry('A')],
      filing: { id: 'f1', currency: 'EUR', boxes: { boxes: [{ box_number: '1', value: '19.00' }, { box_number: '6' }, { box_number: '9', value: '' }] } },
      layout: { net: ['6'], vat: ['1'], count: '9' },
    });
    expect(report.differences.map((d) => d.message)).toEqual(['box 6 of the draft return has no value taxsync can read', 'box 9 of the draft return has no value taxsync can read']);
    expect(report.matches).toBe(false);
    expect(renderReconcile(report)).toContain('net -');
  });
});
