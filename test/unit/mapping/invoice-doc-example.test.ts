import { readFileSync } from 'node:fs';
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { InvoiceData, RefundData } from '../../../src/domain/events.js';
import { invoiceAmount, mapInvoice, mapRefund } from '../../../src/mapping/index.js';
import { MappingSettings } from '../../../src/mapping/settings.js';
import { DOC_SETTINGS, sent } from './helpers.js';

/**
 * Issue 14, item 8: the worked example INV-2026-0815 must be the same invoice in docs/mapping.md
 * and docs/events.md, add up to what the docs say (checked here by hand), and map to the body
 * docs/mapping.md shows.
 */

const doc = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

/** Every ```json block of a page that parses, in order. */
function jsonBlocks(page: string): unknown[] {
  const out: unknown[] = [];
  for (const [, text] of page.matchAll(/```json\n([\s\S]*?)```/g)) {
    try {
      out.push(JSON.parse(text!));
    } catch {
      // Not every block is one JSON value (some show a fragment).
    }
  }
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const pick = <T>(blocks: unknown[], test: (b: Obj) => boolean, what: string): T => {
  const found = blocks.filter(isObj).filter(test);
  expect(found.length, what).toBeGreaterThan(0);
  return found[0] as T;
};

const mapping = jsonBlocks(doc('mapping.md'));
const events = jsonBlocks(doc('events.md'));

// docs/mapping.md: the invoice data, its body, the refund data and its body.
const mappingInvoice = pick<Obj>(mapping, (b) => b.number === 'INV-2026-0815' && Array.isArray(b.lines), 'mapping.md invoice data');
const mappingInvoiceBody = pick<Obj>(mapping, (b) => b.external_id === 'INV-2026-0815' && b.transaction_type === 'invoice', 'mapping.md invoice body');
const mappingRefund = pick<Obj>(mapping, (b) => b.invoice_external_id === 'INV-2026-0815' && b.number === 'CN-2026-0042', 'mapping.md refund data');
const mappingRefundBody = pick<Obj>(mapping, (b) => b.external_id === 'refund-CN-2026-0042' && b.transaction_type === 'refund', 'mapping.md refund body');
// docs/events.md: the canonical invoice and refund events.
const eventsInvoice = pick<{ data: Obj }>(events, (b) => b.type === 'invoice.upserted' && (b.record as Obj)?.external_id === 'INV-2026-0815', 'events.md invoice').data;
const eventsRefund = pick<{ data: Obj }>(events, (b) => b.type === 'refund.created' && (b.data as Obj)?.invoice_external_id === 'INV-2026-0815', 'events.md refund').data;

const amounts = (invoice: Obj) => {
  const data = InvoiceData.parse(invoice);
  return {
    lines: data.lines.map((l) => [l.unit_price.toFixed(), l.quantity.toFixed(), (l.discount ?? new Decimal(0)).toFixed()]),
    discount: (data.discount ?? new Decimal(0)).toFixed(),
    shipping: (data.shipping?.amount ?? new Decimal(0)).toFixed(),
  };
};

describe('the worked example INV-2026-0815 (docs/mapping.md and docs/events.md)', () => {
  it('is the same invoice with the same amounts on both pages', () => {
    expect(amounts(eventsInvoice)).toEqual(amounts(mappingInvoice));
  });

  it('amounts to 149.90 after discounts, shipping included, as both pages say', () => {
    // 10.50 × 3 = 31.50 − 1.50 = 30.00; 120 × 1 = 120.00; − 5.00 invoice discount; + 4.90 shipping = 149.90
    for (const invoice of [eventsInvoice, mappingInvoice]) expect(invoiceAmount(InvoiceData.parse(invoice)).toFixed(2)).toBe('149.90');
    expect(doc('mapping.md')).toContain('**149.90**');
    expect(doc('events.md')).toContain('**149.90**');
    expect(doc('events.md')).not.toMatch(/154\.90/);
  });

  it('has the same refund on both pages: 74.95 of 149.90 is exactly half, tax 19% = 14.24', () => {
    const onEvents = RefundData.parse(eventsRefund);
    const onMapping = RefundData.parse(mappingRefund);
    expect([onEvents.amount.toFixed(2), onEvents.tax_amount?.toFixed(2)]).toEqual(['74.95', '14.24']); // 74.95 × 0.19 = 14.2405
    expect([onMapping.amount.toFixed(2), onMapping.tax_amount?.toFixed(2)]).toEqual(['74.95', '14.24']);
  });

  it('maps the documented invoice and refund to the documented bodies', () => {
    const settings = MappingSettings.parse(DOC_SETTINGS);
    const invoice = InvoiceData.parse(mappingInvoice);
    expect(sent(mapInvoice(invoice, { key: { kind: 'transaction', source: 'api', external_id: 'INV-2026-0815' }, settings }))).toEqual(mappingInvoiceBody);
    const refund = mapRefund(RefundData.parse(mappingRefund), {
      key: { kind: 'transaction', source: 'api', external_id: 'refund-CN-2026-0042' },
      settings,
      original: { id: mappingRefundBody.created_from as string, invoice },
      alreadyRefunded: new Decimal(0),
    });
    expect(sent(refund)).toEqual(mappingRefundBody);
  });
});
