import { describe, expect, it } from 'vitest';
import { mapXeroCreditNote, mapXeroInvoice } from '../../../../src/connectors/xero/map.js';
import { XeroCreditNote, XeroInvoice, readXeroItems } from '../../../../src/connectors/xero/schemas.js';
import { SOURCE, apiFixture, wire } from './helpers.js';

/**
 * TotalDiscount, RemainingCredit and an allocation's AllocationID, Amount and Date are not read by
 * map.ts: a value Xero writes oddly there must not dead-letter the record (it used to fail the
 * schema). What is read is still checked.
 */

type Json = Record<string, unknown>;
const ctx = { source: SOURCE };
const first = (name: string, collection: 'Invoices' | 'CreditNotes'): Json => structuredClone((apiFixture(name).response.body[collection] as Json[])[0]!);

describe('an invoice', () => {
  it('maps the same whatever TotalDiscount holds', () => {
    const raw = first('real-invoice-exclusive-line-discounts', 'Invoices');
    const expected = wire(mapXeroInvoice(XeroInvoice.parse(raw), ctx));
    for (const odd of ['7.95.0', 0.1 + 0.2, 'n/a', null]) {
      const [item] = readXeroItems('Invoices', [{ ...raw, TotalDiscount: odd }], XeroInvoice);
      expect(item!.ok).toBe(true);
      if (item!.ok) expect(wire(mapXeroInvoice(item!.value, ctx))).toEqual(expected);
    }
  });
});

describe('a credit note', () => {
  it('maps the same whatever RemainingCredit and its allocations’ AllocationID, Amount and Date hold', () => {
    const raw = first('real-creditnotes-page-1-allocated-and-unallocated', 'CreditNotes');
    const expected = wire(mapXeroCreditNote(XeroCreditNote.parse(raw), ctx));
    expect(expected[0]!.data.invoice_external_id).toBeDefined();
    const allocations = (raw.Allocations as Json[]).map((a) => ({ ...a, AllocationID: 'not-a-guid', Amount: '1e3', Date: 'yesterday' }));
    const [item] = readXeroItems('CreditNotes', [{ ...raw, RemainingCredit: 'unknown', Allocations: allocations }], XeroCreditNote);
    expect(item!.ok).toBe(true);
    if (item!.ok) expect(wire(mapXeroCreditNote(item!.value, ctx))).toEqual(expected);
  });

  it('still checks what it reads: the allocation’s Invoice.InvoiceID', () => {
    const raw = first('real-creditnotes-page-1-allocated-and-unallocated', 'CreditNotes');
    const allocations = (raw.Allocations as Json[]).map((a) => ({ ...a, Invoice: { InvoiceID: 'INV-0101' } }));
    const [item] = readXeroItems('CreditNotes', [{ ...raw, Allocations: allocations }], XeroCreditNote);
    expect(item).toMatchObject({ ok: false, fields: { 'CreditNotes[0].Allocations[0].Invoice.InvoiceID': [expect.any(String)] } });
  });
});
