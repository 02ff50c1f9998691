import { describe, expect, it } from 'vitest';
import { mapXeroCreditNote, mapXeroInvoice } from '../../../../src/connectors/xero/map.js';
import { XeroCreditNote, XeroInvoice } from '../../../../src/connectors/xero/schemas.js';
import { InvoiceData, RefundData } from '../../../../src/domain/events.js';
import { Money } from '../../../../src/domain/money.js';
import { MappingSettings, mapRefund } from '../../../../src/mapping/index.js';
import { SOURCE, apiFixture, expectAmount, records, wire, type Wire } from './helpers.js';

/**
 * Credit notes → refunds, and the share of their invoice that src/mapping then takes: the fractions
 * worked out by hand in docs/research/accounting-payloads.md ("Credit notes"): CN-0011 0.54,
 * CN-0012 0.25, CN-0013 none.
 */

const ctx = { source: SOURCE };
const ENGINE_ID = '6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

const notes = records(apiFixture('real-creditnotes-page-1-allocated-and-unallocated').response.body, 'CreditNotes', XeroCreditNote);
const cn0011 = notes[0]!.value;
const cn0013 = notes[1]!.value;
const cn0012 = records(apiFixture('real-creditnote-inclusive-allocated').response.body, 'CreditNotes', XeroCreditNote)[0]!.value;
const handPage = apiFixture('real-creditnotes-page-1-allocated-and-unallocated').handComputed as Record<string, Record<string, string>>;
const hand0012 = (apiFixture('real-creditnote-inclusive-allocated').handComputed as Record<string, Record<string, string>>)['CN-0012']!;

function invoice(name: string): InvoiceData {
  const [value] = records(apiFixture(name).response.body, 'Invoices', XeroInvoice).map((r) => r.value);
  return InvoiceData.parse(wire(mapXeroInvoice(value!, ctx))[0]!.data);
}

/** The refund as the processor hands it to src/mapping, with its invoice as taxsync holds it. */
function fraction(event: Wire, original: InvoiceData | undefined) {
  const result = mapRefund(RefundData.parse(event.data), {
    key: { kind: 'transaction', source: SOURCE, external_id: event.record.external_id },
    settings: MappingSettings.parse({}),
    ...(original ? { original: { id: ENGINE_ID, invoice: original } } : {}),
    alreadyRefunded: new Money(0),
  });
  if (result.kind !== 'send') throw new Error(`expected a body, got ${JSON.stringify(result)}`);
  return result;
}

describe('CN-0011: exclusive, allocated in full to INV-0101', () => {
  const [event] = wire(mapXeroCreditNote(cn0011, ctx));

  it('is a refund.created keyed refund-<CreditNoteID>, linked to the allocated invoice', () => {
    expect(event).toMatchObject({
      id: 'xero:refund-249f15fa-f2a7-4acc-8769-0984103f2225:1794967449000',
      type: 'refund.created',
      occurred_at: '2026-11-18T02:04:09Z',
      precedence: 20,
      record: { kind: 'transaction', source: SOURCE, external_id: 'refund-249f15fa-f2a7-4acc-8769-0984103f2225' },
      data: {
        invoice_external_id: 'a03ffcd2-5d91-4c7e-b483-318584e9e439',
        number: 'CN-0011',
        issued_at: '2026-11-18T00:00:00Z',
        currency: 'NZD',
        tax_inclusive: false,
        reason: 'INV-0101 mic stands returned',
        customer: { external_id: '430fa14a-f945-44d3-9f97-5df5e28441b8', name: 'Liam Gallagher' },
      },
    });
  });

  it('refunds the note\'s net 54.00 (not the allocation\'s 62.10, which includes tax), tax 8.10, with its line', () => {
    const hand = handPage['CN-0011']!;
    expectAmount(event!.data.amount, hand.amount_excl_tax!);
    expectAmount(event!.data.tax_amount, hand.tax!);
    const [line] = event!.data.lines as Record<string, unknown>[];
    expectAmount(line!.unit_price, '27.00');
    expectAmount(line!.quantity, '2');
  });

  it('takes 0.54 of INV-0101 (54.00 ÷ 100.00)', () => {
    const sent = fraction(event!, invoice('real-invoice-exclusive-line-discounts'));
    expect(sent.fraction.equals(new Money(handPage['CN-0011']!.fraction!))).toBe(true);
    expect(sent.body.refund_info).toEqual({ is_refund_linked: true, refund_linked_percentage: '0.54' });
  });
});

describe('CN-0012: inclusive, allocated in full to INV-0102', () => {
  const [event] = wire(mapXeroCreditNote(cn0012, ctx));

  it('refunds the net 20.00 (23.00 gross less 3.00 GST)', () => {
    expect(event!.data).toMatchObject({ invoice_external_id: '7ef31b20-de17-4312-8382-412f869b1510', tax_inclusive: true });
    expectAmount(event!.data.amount, hand0012.net!);
    expectAmount(event!.data.tax_amount, hand0012.tax!);
  });

  it('takes 0.25 of INV-0102 (20.00 ÷ (92.00 − 12.00))', () => {
    const sent = fraction(event!, invoice('real-invoice-inclusive-line-discount'));
    expect(sent.fraction.equals(new Money(hand0012.fraction!))).toBe(true);
  });
});

describe('CN-0013: not allocated', () => {
  const [event] = wire(mapXeroCreditNote(cn0013, ctx));

  it('is an unlinked refund of 20.00 net, taxed on its own line', () => {
    expect(event!.type).toBe('refund.created');
    expect(event!.data.invoice_external_id).toBeUndefined();
    expectAmount(event!.data.amount, handPage['CN-0013']!.amount_excl_tax!);
    expectAmount(event!.data.tax_amount, handPage['CN-0013']!.tax!);
    const sent = fraction(event!, undefined);
    expect(sent.fraction.isZero()).toBe(true);
    expect(sent.body.refund_info).toEqual({ is_refund_linked: false });
    expect(sent.body.items).toEqual([{ name: 'Goodwill credit', tax_code: 'OUTPUT2', unit_price: '20', quantity: '1' }]);
  });
});

describe('allocations, states and kinds', () => {
  const raw = (apiFixture('real-creditnotes-page-1-allocated-and-unallocated').response.body.CreditNotes as Record<string, unknown>[])[0]!;
  const allocation = raw.Allocations as Record<string, unknown>[];
  const variant = (overrides: Record<string, unknown>) => XeroCreditNote.parse({ ...raw, ...overrides });
  const toInvoice = (InvoiceID: string, Amount: number, extra: Record<string, unknown> = {}) => ({ ...allocation[0], Amount, Invoice: { InvoiceID }, ...extra });
  const OTHER = '046d8a6d-1ae1-4b4d-9340-5601bdf41b87';

  it('refuses a note allocated to several invoices, naming its Allocations', () => {
    const note = variant({ Allocations: [toInvoice('a03ffcd2-5d91-4c7e-b483-318584e9e439', 31.05), toInvoice(OTHER, 31.05)] });
    const result = mapXeroCreditNote(note, { ...ctx, path: 'CreditNotes[0].' });
    expect(result).toMatchObject({ kind: 'invalid', fields: { 'CreditNotes[0].Allocations': [expect.stringMatching(/allocated to 2 invoices/)] } });
  });

  it('links a note allocated twice to one invoice, and leaves deleted allocations out', () => {
    const twice = variant({ Allocations: [toInvoice(OTHER, 30), toInvoice(OTHER, 32.1)] });
    expect(wire(mapXeroCreditNote(twice, ctx))[0]!.data.invoice_external_id).toBe(OTHER);
    const moved = variant({ Allocations: [toInvoice('a03ffcd2-5d91-4c7e-b483-318584e9e439', 62.1, { IsDeleted: true }), toInvoice(OTHER, 62.1)] });
    expect(wire(mapXeroCreditNote(moved, ctx))[0]!.data.invoice_external_id).toBe(OTHER);
  });

  it('refuses an allocation that names no invoice', () => {
    expect(mapXeroCreditNote(variant({ Allocations: [{ ...allocation[0], Invoice: {} }] }), ctx)).toMatchObject({
      kind: 'invalid',
      fields: { 'Allocations[0].Invoice.InvoiceID': ['missing: an allocation must name its invoice'] },
    });
  });

  it('VOIDED is a refund.cancelled, final; DELETED a refund.deleted, final', () => {
    expect(wire(mapXeroCreditNote(variant({ Status: 'VOIDED' }), ctx))[0]).toMatchObject({ type: 'refund.cancelled', final: true, precedence: 30 });
    expect(wire(mapXeroCreditNote(variant({ Status: 'DELETED' }), ctx))[0]).toMatchObject({ type: 'refund.deleted', final: true, data: {} });
  });

  it('AUTHORISED is below PAID within one millisecond', () => {
    expect(wire(mapXeroCreditNote(variant({ Status: 'AUTHORISED' }), ctx))[0]!.precedence).toBe(10);
  });

  it('ignores drafts and supplier credit notes', () => {
    expect(mapXeroCreditNote(variant({ Status: 'DRAFT' }), ctx).kind).toBe('ignore');
    expect(mapXeroCreditNote(variant({ Type: 'ACCPAYCREDIT' }), ctx)).toEqual({ kind: 'ignore', reason: 'a supplier credit note (ACCPAYCREDIT): purchases carry no sales tax' });
  });

  it('refuses a note without SubTotal: the refunded amount before tax is unknown', () => {
    expect(mapXeroCreditNote(variant({ SubTotal: null }), ctx)).toMatchObject({ kind: 'invalid', fields: { SubTotal: [expect.any(String)] } });
  });
});
