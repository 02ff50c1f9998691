import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { VatTransactionRequest } from '../../../src/api/schemas/vat.js';
import type { InvoiceData } from '../../../src/domain/events.js';
import { Money } from '../../../src/domain/money.js';
import { validateVatTransaction } from '../../../src/mapping/vat-validation.js';
import {
  chooseRegistration,
  classifySupply,
  groupAmounts,
  mapVatSubmission,
  reportingPeriod,
  reportingPeriodRange,
  shouldSubmit,
} from '../../../src/mapping/vat/index.js';
import {
  EJ_AT,
  EJ_DE,
  EJ_OSS,
  SETTINGS_INPUT,
  TODAY,
  TYPES,
  bodies,
  businessIn,
  consumerIn,
  fieldsOf,
  one,
  typeId,
  vatCtx,
  vatInvoice,
  vatSettings,
} from './vat-fixtures.js';

const amountsOf = (b: VatTransactionRequest) => ({ net: b.net, vat: b.vat, gross: b.gross });
/** Canonical data back to its wire form (decimal strings), to build a variant of it. */
const wire = (invoice: InvoiceData): z.input<typeof InvoiceData> => JSON.parse(JSON.stringify(invoice)) as z.input<typeof InvoiceData>;

describe('which invoices are submitted', () => {
  it('none while no registration is configured: VAT is off', () => {
    const result = mapVatSubmission(vatInvoice(), vatCtx({}, { registrations: [] }));
    expect(result).toMatchObject({ kind: 'ignore', reason: expect.stringMatching(/VAT is off: no registrations are configured/) });
  });

  it('finalised (the default): active and paid invoices, never cancelled ones', () => {
    const settings = vatSettings();
    expect(settings.submit_when).toBe('finalised');
    expect(shouldSubmit(vatInvoice({ status: 'active' }), settings)).toEqual({ submit: true });
    expect(shouldSubmit(vatInvoice({ status: 'paid' }), settings)).toEqual({ submit: true });
    expect(shouldSubmit(vatInvoice({ status: 'cancelled' }), settings)).toEqual({ submit: false, reason: 'the invoice is cancelled' });
    expect(mapVatSubmission(vatInvoice({ status: 'cancelled' }), vatCtx()).kind).toBe('ignore');
  });

  it('paid: only paid invoices, globally or per source', () => {
    const paid = vatSettings({ submit_when: 'paid' });
    expect(shouldSubmit(vatInvoice({ status: 'active' }), paid)).toMatchObject({ submit: false, reason: expect.stringMatching(/once it is paid/) });
    expect(shouldSubmit(vatInvoice({ status: 'paid' }), paid)).toEqual({ submit: true });
    const perSource = vatSettings({ submit_when_by_source: { shopify: 'paid' } });
    expect(shouldSubmit(vatInvoice({ status: 'active' }), perSource, 'shopify').submit).toBe(false);
    expect(shouldSubmit(vatInvoice({ status: 'active' }), perSource, 'api').submit).toBe(true);
  });

  it('only sales a configured registration covers (a US seller with an OSS registration: its US sales are out of scope)', () => {
    const settings = vatSettings({ seller_country: 'US', registrations: [{ entity_jurisdiction: EJ_OSS, country: 'IE', scheme: 'oss' }] });
    expect(shouldSubmit(vatInvoice(consumerIn('US')), settings)).toMatchObject({ submit: false, reason: expect.stringMatching(/no registration is configured: outside taxsync's VAT scope/) });
    expect(shouldSubmit(vatInvoice(consumerIn('FR')), settings)).toEqual({ submit: true });
  });

  it('an invoice whose ERP names the entity jurisdiction is in scope', () => {
    const settings = vatSettings({ seller_country: 'US', registrations: [{ entity_jurisdiction: EJ_OSS, country: 'IE', scheme: 'oss' }] });
    expect(shouldSubmit(vatInvoice({ ...consumerIn('US'), vat: { entity_jurisdiction: EJ_DE } }), settings)).toEqual({ submit: true });
  });
});

describe('which registration covers a supply', () => {
  const settings = vatSettings({ registrations: [...SETTINGS_INPUT.registrations, { taxable_jurisdiction: 'AT' }] });
  const resolved = new Map([['AT/standard', EJ_AT]]);

  it('chooses a domestic registration by country, the OSS for the oss scheme', () => {
    expect(chooseRegistration(settings.registrations, { country: 'DE', scheme: 'domestic' })?.entity_jurisdiction).toBe(EJ_DE);
    expect(chooseRegistration(settings.registrations, { country: 'FR', scheme: 'oss' })?.entity_jurisdiction).toBe(EJ_OSS);
    expect(chooseRegistration(settings.registrations, { country: 'FR', scheme: 'domestic' })).toBeUndefined();
  });

  const cases: [string, ReturnType<typeof vatInvoice>, string, string, string][] = [
    ['domestic sale', vatInvoice(), 'domestic', 'DE', EJ_DE],
    ['consumer in another member state: OSS', vatInvoice(consumerIn('FR')), 'distance_sale', 'FR', EJ_OSS],
    ['consumer where the seller is registered: local sale', vatInvoice(consumerIn('AT')), 'domestic', 'AT', EJ_AT],
    ['business in another member state: intra-EU, reported at home', vatInvoice(businessIn('FR', 'FR12345678901')), 'intra_eu', 'DE', EJ_DE],
    ['consumer outside the EU: export', vatInvoice(consumerIn('US')), 'export', 'DE', EJ_DE],
    ['business in Switzerland: export', vatInvoice(businessIn('CH', 'CHE123456789MWST')), 'export', 'DE', EJ_DE],
  ];
  for (const [label, invoice, kind, vatCountry, ej] of cases) {
    it(`${label}: ${kind}, ${vatCountry} VAT, ${ej}`, () => {
      const decision = classifySupply(invoice, settings);
      expect(decision).toMatchObject({ ok: true, supply: { kind, vatCountry } });
      const lines = kind === 'domestic' || kind === 'distance_sale' ? undefined : [{ unit_price: '100', quantity: '1', tax_rate: '0' }];
      const body = one(mapVatSubmission(lines === undefined ? invoice : { ...invoice, lines: vatInvoice({ lines }).lines }, vatCtx({ settings, resolved })));
      expect(body.entity_jurisdiction).toBe(ej);
    });
  }

  it('the destination is the shipping country; partner_country the billing country (the VAT number\'s)', () => {
    const invoice = vatInvoice({ addresses: { billing: { country: 'AT' }, shipping: { country: 'DE' } }, customer: { external_id: 'C', name: 'Wien GmbH', tax_number: 'ATU12345678' } });
    const body = one(mapVatSubmission(invoice, vatCtx()));
    expect(body).toMatchObject({ entity_jurisdiction: EJ_DE, partner_country: 'AT', vat_number: 'ATU12345678', vat_rate: '19.00' });
  });

  it('a consumer in another member state without an OSS registration: invalid, naming the fix', () => {
    const ctx = vatCtx({}, { registrations: [{ entity_jurisdiction: EJ_DE, country: 'DE' }] });
    const fields = fieldsOf(mapVatSubmission(vatInvoice(consumerIn('FR')), ctx));
    expect(fields.entity_jurisdiction![0]).toMatch(/consumer in FR .*configure an OSS registration.*distance_sales to "origin"/);
  });

  it('distance_sales origin: below the threshold, the seller\'s VAT under the domestic registration', () => {
    const ctx = vatCtx({}, { registrations: [{ entity_jurisdiction: EJ_DE, country: 'DE' }], distance_sales: 'origin' });
    expect(one(mapVatSubmission(vatInvoice(consumerIn('FR')), ctx))).toMatchObject({ entity_jurisdiction: EJ_DE, vat_rate: '19.00', partner_country: 'FR' });
  });

  it('a registration configured by taxable jurisdiction and not resolved: invalid on entity_jurisdiction', () => {
    const fields = fieldsOf(mapVatSubmission(vatInvoice(consumerIn('AT')), vatCtx({ settings })));
    expect(fields.entity_jurisdiction![0]).toMatch(/registration AT\/standard is not resolved/);
  });

  it('an invoice with no country at all: invalid on partner_country', () => {
    const fields = fieldsOf(mapVatSubmission(vatInvoice({ addresses: {}, customer: { external_id: 'C', name: 'X' } }), vatCtx()));
    expect(fields.partner_country![0]).toMatch(/names no country/);
  });
});

describe('amounts: exact, then half-up to 2 decimals; rule 1 exact, rule 2 within the tolerance', () => {
  // [label, currency, tax_inclusive, unit_price, quantity, tax_rate fraction, net, vat, gross]
  const table: [string, string, boolean, string, string, string, string, string, string][] = [
    ['EUR exclusive', 'EUR', false, '100', '1', '0.19', '100.00', '19.00', '119.00'],
    ['EUR half-cent net rounds up', 'EUR', false, '3.335', '3', '0.19', '10.01', '1.90', '11.91'],
    ['EUR half-cent vat rounds up', 'EUR', false, '10.50', '1', '0.19', '10.50', '2.00', '12.50'],
    ['EUR inclusive', 'EUR', true, '119', '1', '0.19', '100.00', '19.00', '119.00'],
    ['EUR inclusive, net rounded', 'EUR', true, '10', '1', '0.19', '8.40', '1.60', '10.00'],
    ['EUR inclusive half-cent gross', 'EUR', true, '3.335', '3', '0.19', '8.41', '1.60', '10.01'],
    ['JPY exclusive: vat keeps its cents', 'JPY', false, '999', '1', '0.10', '999.00', '99.90', '1098.90'],
    ['JPY inclusive', 'JPY', true, '1100', '1', '0.10', '1000.00', '100.00', '1100.00'],
    ['JPY inclusive, net rounded', 'JPY', true, '1099', '1', '0.10', '999.09', '99.91', '1099.00'],
    ['KWD exclusive: 3 decimals to 2', 'KWD', false, '10.125', '1', '0.05', '10.13', '0.51', '10.64'],
    ['KWD inclusive: 3 decimals to 2', 'KWD', true, '10.555', '1', '0.05', '10.06', '0.50', '10.56'],
    ['GBP zero-rated', 'GBP', false, '12.345', '2', '0', '24.69', '0.00', '24.69'],
  ];
  for (const [label, currency, inclusive, unit, quantity, rate, net, vat, gross] of table) {
    it(`${label}: ${unit} × ${quantity} → ${net} + ${vat} = ${gross}`, () => {
      const body = one(mapVatSubmission(vatInvoice({ currency, tax_inclusive: inclusive, lines: [{ unit_price: unit, quantity, tax_rate: rate }] }), vatCtx()));
      expect(amountsOf(body)).toEqual({ net, vat, gross });
      expect(body.currency).toBe(currency);
    });
  }

  it('notes the rounding of a 3-decimal currency', () => {
    const result = mapVatSubmission(vatInvoice({ currency: 'KWD', lines: [{ unit_price: '10.125', quantity: '1', tax_rate: '0.05' }] }), vatCtx());
    expect(result.kind === 'send' && result.notes).toContainEqual(expect.stringMatching(/KWD amount 10\.125 rounded half-up to 2 decimals/));
  });

  it('holds rule 1 exactly and rule 2 within 0.01 for any amount and rate, both bases', () => {
    const rates = ['0', '2.1', '5.5', '7', '8.1', '19', '20', '21', '25.5', '27'];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 2000; i++) {
      const sum = new Money(next() % 10_000_000).dividedBy(1000);
      const rate = new Money(rates[next() % rates.length]!);
      for (const inclusive of [false, true]) {
        const { net, vat, gross } = groupAmounts(sum, rate, inclusive);
        expect(net.plus(vat).equals(gross)).toBe(true);
        expect(vat.minus(net.times(rate).dividedBy(100)).abs().lessThanOrEqualTo('0.01'), `${sum.toFixed()} @ ${rate.toFixed()} ${inclusive}`).toBe(true);
        expect(Math.max(net.decimalPlaces(), vat.decimalPlaces(), gross.decimalPlaces())).toBeLessThanOrEqual(2);
      }
    }
  });

  it('subtracts line and order discounts and adds shipping (after its discount) before rounding once', () => {
    const invoice = vatInvoice({
      lines: [{ unit_price: '50', quantity: '2', discount: '10', tax_rate: '0.19' }],
      discount: '5',
      shipping: { amount: '5.90', discount: '1.00' },
    });
    expect(amountsOf(one(mapVatSubmission(invoice, vatCtx())))).toEqual({ net: '89.90', vat: '17.08', gross: '106.98' });
  });

  it('nets a negative credit line into its rate', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '100', quantity: '1', tax_rate: '0.19' }, { unit_price: '-20', quantity: '1', tax_rate: '0.19' }] });
    expect(amountsOf(one(mapVatSubmission(invoice, vatCtx())))).toEqual({ net: '80.00', vat: '15.20', gross: '95.20' });
  });

  it('an invoice that nets to a negative amount is not expressible (net must be positive)', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '-20', quantity: '1', tax_rate: '0.19' }] });
    expect(fieldsOf(mapVatSubmission(invoice, vatCtx())).net![0]).toMatch(/nets to -20\.00: not expressible/);
  });

  it('an invoice that totals 0.00 has nothing to report', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '10', quantity: '1', discount: '10', tax_rate: '0.19' }] });
    expect(mapVatSubmission(invoice, vatCtx())).toMatchObject({ kind: 'ignore', reason: expect.stringMatching(/totals 0\.00/) });
  });

  it('notes a computed vat that differs from the tax the source charged by more than the tolerance', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '100', quantity: '1', tax_rate: '0.19', tax_amount: '18.50' }] });
    const result = mapVatSubmission(invoice, vatCtx());
    expect(result.kind === 'send' && result.notes).toContainEqual(expect.stringMatching(/vat 19\.00 differs from the tax the source charged \(18\.5\)/));
  });
});

describe('rates', () => {
  it('Line.tax_rate is a fraction; vat_rate goes out as a percentage with 2 decimals', () => {
    expect(one(mapVatSubmission(vatInvoice({ lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.055' }] }), vatCtx())).vat_rate).toBe('5.50');
  });

  it('an ERP\'s vat.vat_rate (a percentage) is the rate of the whole invoice', () => {
    const invoice = vatInvoice({ vat: { vat_rate: '7' }, lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.19' }, { unit_price: '20', quantity: '1' }] });
    expect(one(mapVatSubmission(invoice, vatCtx()))).toMatchObject({ vat_rate: '7.00', vat_rate_type: 'reduced', net: '30.00', vat: '2.10' });
  });

  it('infers a line\'s rate from its tax_amount: a configured rate that reproduces it, else the quotient (noted)', () => {
    const small = vatInvoice({ lines: [{ unit_price: '0.10', quantity: '1', tax_amount: '0.02' }] });
    expect(one(mapVatSubmission(small, vatCtx())).vat_rate).toBe('19.00');
    const unconfigured = mapVatSubmission(small, vatCtx({}, { rates: {} }));
    expect(one(unconfigured).vat_rate).toBe('20.00');
    expect(unconfigured.kind === 'send' && unconfigured.notes).toContainEqual(expect.stringMatching(/lines\[0\]: VAT rate 20\.00% inferred/));
  });

  it('infers one rate from tax_total when no line states tax', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '60', quantity: '1' }, { unit_price: '40', quantity: '1' }], tax_total: '19.00' });
    expect(one(mapVatSubmission(invoice, vatCtx()))).toMatchObject({ vat_rate: '19.00', net: '100.00', vat: '19.00' });
  });

  it('a domestic invoice that states no tax at all is invalid; a line without a rate among lines with rates too', () => {
    expect(fieldsOf(mapVatSubmission(vatInvoice({ lines: [{ unit_price: '10', quantity: '1' }] }), vatCtx())).vat_rate![0]).toMatch(/states no VAT/);
    const mixed = vatInvoice({ lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.19' }, { unit_price: '10', quantity: '1' }] });
    expect(Object.keys(fieldsOf(mapVatSubmission(mixed, vatCtx())))).toEqual(['lines[1].tax_rate']);
  });
});

describe('rate types', () => {
  it('standard by default, reduced for a configured reduced rate of the VAT country', () => {
    expect(one(mapVatSubmission(vatInvoice(), vatCtx())).vat_rate_type).toBe('standard');
    expect(one(mapVatSubmission(vatInvoice({ lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.07' }] }), vatCtx())).vat_rate_type).toBe('reduced');
  });

  it('by SKU, then by tax code; a domestic 0% is zero_rated unless zero_rate says exempt', () => {
    const line = { unit_price: '10', quantity: '1', tax_rate: '0', sku: 'INS-1', tax_code: 'FIN' };
    expect(one(mapVatSubmission(vatInvoice({ lines: [line] }), vatCtx())).vat_rate_type).toBe('zero_rated');
    expect(one(mapVatSubmission(vatInvoice({ lines: [line] }), vatCtx({}, { rate_types: { zero_rate: 'exempt' } }))).vat_rate_type).toBe('exempt');
    expect(one(mapVatSubmission(vatInvoice({ lines: [line] }), vatCtx({}, { rate_types: { by_tax_code: { FIN: 'exempt' } } }))).vat_rate_type).toBe('exempt');
    const both = { rate_types: { by_sku: { 'INS-1': 'zero_rated' as const }, by_tax_code: { FIN: 'exempt' as const } } };
    expect(one(mapVatSubmission(vatInvoice({ lines: [line] }), vatCtx({}, both))).vat_rate_type).toBe('zero_rated');
  });

  it('a line classified exempt that was charged VAT is invalid, naming the line', () => {
    const invoice = vatInvoice({ lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.19', tax_code: 'FIN' }] });
    const fields = fieldsOf(mapVatSubmission(invoice, vatCtx({}, { rate_types: { by_tax_code: { FIN: 'exempt' } } })));
    expect(fields['lines[0].tax_rate']![0]).toMatch(/classified exempt .* but VAT of 19\.00% is charged/);
  });

  it('an ERP\'s vat.vat_rate_type wins, and must fit the rate', () => {
    expect(one(mapVatSubmission(vatInvoice({ vat: { vat_rate_type: 'reduced' } }), vatCtx())).vat_rate_type).toBe('reduced');
    expect(Object.keys(fieldsOf(mapVatSubmission(vatInvoice({ vat: { vat_rate_type: 'exempt' } }), vatCtx())))).toEqual(['vat_rate_type']);
  });
});

describe('an invoice with several VAT rates', () => {
  const mixed = vatInvoice({
    lines: [
      { sku: 'WID-1', unit_price: '100', quantity: '1', tax_rate: '0.19' },
      { sku: 'BOOK-1', unit_price: '50', quantity: '1', tax_rate: '0.07' },
    ],
    discount: '15',
    shipping: { amount: '10' },
  });

  it('split (the default): one submission per rate, numbered "<number> (<rate>% <type>)", the order discount pro rata, shipping at the highest rate', () => {
    const all = bodies(mapVatSubmission(mixed, vatCtx()));
    expect(all.map((b) => [b.invoice_number, b.vat_rate, b.vat_rate_type, b.net, b.vat, b.gross])).toEqual([
      ['INV-1001 (19.00% standard)', '19.00', 'standard', '100.00', '19.00', '119.00'],
      ['INV-1001 (7.00% reduced)', '7.00', 'reduced', '45.00', '3.15', '48.15'],
    ]);
    const total = all.reduce((sum, b) => sum.plus(b.net), new Money(0));
    expect(total.toFixed(2)).toBe('145.00');
  });

  it('shipping that states its own tax takes the rate that reproduces it', () => {
    const invoice = { ...mixed, shipping: { amount: new Money(10), tax_amount: new Money('0.70') } };
    const all = bodies(mapVatSubmission(invoice, vatCtx()));
    expect(all.map((b) => [b.vat_rate, b.net])).toEqual([['19.00', '90.00'], ['7.00', '55.00']]);
  });

  it('numbers the parts the same way on every update, so the ledger key is stable', () => {
    const again = vatInvoice({ ...wire(mixed), status: 'paid', updated_at: '2025-03-03T00:00:00Z' });
    expect(bodies(mapVatSubmission(again, vatCtx())).map((b) => b.invoice_number)).toEqual(bodies(mapVatSubmission(mixed, vatCtx())).map((b) => b.invoice_number));
  });

  it('0% exempt and 0% zero-rated lines are separate parts', () => {
    const invoice = vatInvoice({
      lines: [
        { unit_price: '10', quantity: '1', tax_rate: '0', tax_code: 'FIN' },
        { unit_price: '20', quantity: '1', tax_rate: '0' },
      ],
    });
    const all = bodies(mapVatSubmission(invoice, vatCtx({}, { rate_types: { by_tax_code: { FIN: 'exempt' } } })));
    expect(all.map((b) => [b.invoice_number, b.net])).toEqual([
      ['INV-1001 (0.00% exempt)', '10.00'],
      ['INV-1001 (0.00% zero_rated)', '20.00'],
    ]);
  });

  it('mixed_rates reject: dead letter with the rates named, nothing sent', () => {
    const fields = fieldsOf(mapVatSubmission(mixed, vatCtx({}, { mixed_rates: 'reject' })));
    expect(fields.vat_rate![0]).toMatch(/2 VAT rates \(19\.00% standard, 7\.00% reduced\) and vat\.mixed_rates is "reject"/);
  });

  it('a part of a split that fails names its invoice number in the message, the field stays the service\'s', () => {
    const invoice = vatInvoice({ ...wire(mixed), vat: { vat_number: 'DE123' } });
    const fields = fieldsOf(mapVatSubmission(invoice, vatCtx()));
    expect(Object.keys(fields)).toEqual(['vat_number']);
    expect(fields.vat_number![0]).toMatch(/^INV-1001 \(19\.00% standard\): DE123 does not match/);
  });
});

describe('transaction types, resolved by name from the list', () => {
  const typeOf = (invoice: ReturnType<typeof vatInvoice>, ctx = vatCtx()) => TYPES.find((t) => t.id === one(mapVatSubmission(invoice, ctx)).transaction_type_id)?.name;
  const zero = [{ unit_price: '100', quantity: '1', tax_rate: '0' }];

  it('B2B Sales with a partner VAT number, B2C Sales without', () => {
    expect(typeOf(vatInvoice())).toBe('B2B Sales');
    expect(typeOf(vatInvoice(consumerIn('DE')))).toBe('B2C Sales');
    expect(typeOf(vatInvoice(consumerIn('FR')))).toBe('B2C Sales');
  });

  it('Intra-EU Supplies for a zero-rated supply to a business in another member state; B2B Sales when VAT was charged anyway', () => {
    const body = one(mapVatSubmission(vatInvoice({ ...businessIn('FR', 'FR12345678901'), lines: zero }), vatCtx()));
    expect(body).toMatchObject({ transaction_type_id: typeId('Intra-EU Supplies'), vat_rate_type: 'zero_rated', vat_rate: '0.00', partner_country: 'FR' });
    expect(typeOf(vatInvoice(businessIn('FR', 'FR12345678901')))).toBe('B2B Sales');
  });

  it('Exports for a zero-rated export when the list has it, else B2B/B2C Sales (noted)', () => {
    expect(typeOf(vatInvoice({ ...consumerIn('US'), lines: zero }))).toBe('Exports');
    const types = TYPES.filter((t) => t.name !== 'Exports');
    const result = mapVatSubmission(vatInvoice({ ...consumerIn('US'), lines: zero }), vatCtx({ transactionTypes: types }));
    expect(one(result).transaction_type_id).toBe(typeId('B2C Sales'));
    expect(result.kind === 'send' && result.notes).toContainEqual(expect.stringMatching(/no "Exports"/));
  });

  it('Import Services only when the ERP states it (a purchase under the reverse charge, never derived from a sale)', () => {
    expect(typeOf(vatInvoice({ vat: { transaction_type: 'import services' } }))).toBe('Import Services');
  });

  it('names configured in settings; a name missing from the list is invalid on transaction_type_id', () => {
    const renamed = TYPES.map((t) => (t.name === 'B2B Sales' ? { ...t, name: 'Domestic B2B' } : t));
    expect(one(mapVatSubmission(vatInvoice(), vatCtx({ transactionTypes: renamed }, { transaction_types: { b2b: 'Domestic B2B' } }))).transaction_type_id).toBe(typeId('B2B Sales'));
    const fields = fieldsOf(mapVatSubmission(vatInvoice(), vatCtx({ transactionTypes: renamed })));
    expect(fields.transaction_type_id![0]).toMatch(/no type named "B2B Sales"/);
    expect(fieldsOf(mapVatSubmission(vatInvoice({ vat: { transaction_type: 'Nope' } }), vatCtx())).transaction_type_id![0]).toMatch(/"Nope"/);
  });
});

describe('reporting periods', () => {
  const table: [string, 'monthly' | 'quarterly', string, string][] = [
    ['2025-03-02', 'monthly', '2025-03-01', '2025-03-31'],
    ['2025-03-02', 'quarterly', '2025-01-01', '2025-03-31'],
    ['2025-04-01', 'quarterly', '2025-04-01', '2025-06-30'],
    ['2025-12-31', 'monthly', '2025-12-01', '2025-12-31'],
    ['2025-12-31', 'quarterly', '2025-10-01', '2025-12-31'],
    ['2026-01-01', 'quarterly', '2026-01-01', '2026-03-31'],
    ['2024-02-10', 'monthly', '2024-02-01', '2024-02-29'],
  ];
  for (const [date, period, start, end] of table) {
    it(`${date} ${period} → ${start} … ${end}`, () => {
      expect(reportingPeriod(date, period)).toBe(start);
      expect(reportingPeriodRange(date, period)).toEqual({ start, end });
    });
  }

  it('quarterly by default, monthly globally, or per registration', () => {
    expect(one(mapVatSubmission(vatInvoice(), vatCtx())).reporting_period).toBe('2025-01-01');
    expect(one(mapVatSubmission(vatInvoice(), vatCtx({}, { reporting_period: 'monthly' }))).reporting_period).toBe('2025-03-01');
    const perRegistration = { reporting_period: 'monthly' as const, registrations: [{ entity_jurisdiction: EJ_DE, country: 'DE' }, { entity_jurisdiction: EJ_OSS, country: 'DE', scheme: 'oss' as const, reporting_period: 'quarterly' as const }] };
    expect(one(mapVatSubmission(vatInvoice(consumerIn('FR')), vatCtx({}, perRegistration))).reporting_period).toBe('2025-01-01');
    expect(one(mapVatSubmission(vatInvoice(consumerIn('DE')), vatCtx({}, perRegistration))).reporting_period).toBe('2025-03-01');
  });

  it('at a year boundary, invoice_date and the period follow the date as written in the document\'s own offset', () => {
    const body = one(mapVatSubmission(vatInvoice({ issued_at: '2025-01-01T00:30:00+01:00' }), vatCtx({ today: '2025-01-02' }, { reporting_period: 'monthly' })));
    expect(body).toMatchObject({ invoice_date: '2025-01-01', reporting_period: '2025-01-01' });
    const december = one(mapVatSubmission(vatInvoice({ issued_at: '2024-12-31T23:30:00-05:00' }), vatCtx({ today: '2025-01-02' })));
    expect(december).toMatchObject({ invoice_date: '2024-12-31', reporting_period: '2024-10-01' });
  });
});

describe('invoice numbers and dates', () => {
  it('the document number, else the external id; a prefix per source; at most 255 characters', () => {
    expect(one(mapVatSubmission(vatInvoice({ number: ' INV-7 ' }), vatCtx())).invoice_number).toBe('INV-7');
    expect(one(mapVatSubmission(vatInvoice({ number: undefined }), vatCtx())).invoice_number).toBe('INV-1001');
    expect(one(mapVatSubmission(vatInvoice({ number: 'N-1' }), vatCtx({}, { invoice_number: { from: 'external_id' } }))).invoice_number).toBe('INV-1001');
    const shop = vatCtx({ key: { kind: 'transaction', source: 'shopify', external_id: '820982911946154508' } }, { invoice_number: { prefix_by_source: { shopify: 'SHOP-' } } });
    expect(one(mapVatSubmission(vatInvoice({ number: '#1001' }), shop))).toMatchObject({ invoice_number: 'SHOP-#1001', source: 'shopify' });
    expect(Object.keys(fieldsOf(mapVatSubmission(vatInvoice({ number: 'x'.repeat(256) }), vatCtx())))).toEqual(['invoice_number']);
  });

  it('source is the connector\'s configured source', () => {
    expect(one(mapVatSubmission(vatInvoice(), vatCtx({ source: 'erp_main' }))).source).toBe('erp_main');
  });

  it('an invoice dated tomorrow (a time-zone ahead of UTC) waits; further ahead it is invalid (rule 3)', () => {
    expect(mapVatSubmission(vatInvoice({ issued_at: '2025-03-16T00:30:00+02:00' }), vatCtx()).kind).toBe('wait');
    const fields = fieldsOf(mapVatSubmission(vatInvoice({ issued_at: '2025-03-17T10:00:00Z' }), vatCtx()));
    expect(fields.invoice_date![0]).toMatch(/2025-03-17 is in the future \(today is 2025-03-15\)/);
  });

  it('a partner name from vat facts, the customer, or the fallback; none is invalid', () => {
    expect(one(mapVatSubmission(vatInvoice({ vat: { partner_name: 'Acme AG (ERP)' } }), vatCtx())).partner_name).toBe('Acme AG (ERP)');
    const anonymous = vatInvoice({ customer: undefined, tax_total: undefined });
    expect(fieldsOf(mapVatSubmission(anonymous, vatCtx())).partner_name![0]).toMatch(/partner_name_fallback/);
    expect(one(mapVatSubmission(anonymous, vatCtx({}, { partner_name_fallback: 'Private customer' }))).partner_name).toBe('Private customer');
  });
});

describe('every body is checked locally before it may be sent', () => {
  it('ERP VAT facts win over derived values, and are validated like the rest', () => {
    const erp = vatInvoice({ vat: { entity_jurisdiction: EJ_AT.toUpperCase(), partner_country: 'AT', vat_number: 'ATU12345678', partner_name: 'Wien GmbH' } });
    expect(one(mapVatSubmission(erp, vatCtx()))).toMatchObject({ entity_jurisdiction: EJ_AT, partner_country: 'AT', vat_number: 'ATU12345678', partner_name: 'Wien GmbH' });
    const wrong = vatInvoice({ vat: { vat_number: 'FR123' } });
    expect(Object.keys(fieldsOf(mapVatSubmission(wrong, vatCtx())))).toEqual(['vat_number']);
  });

  it('an ERP-named entity jurisdiction needs no covering registration, and takes the period of the registration it names', () => {
    const noOss = vatCtx({}, { registrations: [{ entity_jurisdiction: EJ_DE, country: 'DE' }] });
    expect(one(mapVatSubmission(vatInvoice({ ...consumerIn('FR'), vat: { entity_jurisdiction: EJ_OSS } }), noOss)).entity_jurisdiction).toBe(EJ_OSS);
    const monthlyAt = vatCtx(
      { resolved: new Map([['AT/standard', EJ_AT.toUpperCase()]]) },
      { registrations: [...SETTINGS_INPUT.registrations, { taxable_jurisdiction: 'AT', reporting_period: 'monthly' }] },
    );
    expect(one(mapVatSubmission(vatInvoice({ vat: { entity_jurisdiction: EJ_AT } }), monthlyAt))).toMatchObject({ entity_jurisdiction: EJ_AT, reporting_period: '2025-03-01' });
  });

  it('a currency or country that is not ISO is refused on its field', () => {
    expect(Object.keys(fieldsOf(mapVatSubmission(vatInvoice({ currency: 'EUX' }), vatCtx())))).toEqual(['currency']);
    const xx = vatInvoice({ ...consumerIn('XX'), lines: [{ unit_price: '1', quantity: '1', tax_rate: '0' }] });
    expect(Object.keys(fieldsOf(mapVatSubmission(xx, vatCtx())))).toEqual(['partner_country']);
  });

  it('a rate with more than 2 decimals is refused on vat_rate (rule 8), not rounded', () => {
    const fields = fieldsOf(mapVatSubmission(vatInvoice({ lines: [{ unit_price: '10', quantity: '1', tax_rate: '0.08875' }] }), vatCtx()));
    expect(fields.vat_rate![0]).toMatch(/at most 2 decimal places are allowed \(got 8\.875\)/);
  });

  it('what is sent passes the validator with the service\'s own tolerance-free reading of rule 2 for exclusive prices', () => {
    for (const body of bodies(mapVatSubmission(vatInvoice(), vatCtx()))) {
      expect(validateVatTransaction(body, { today: TODAY, knownTypeIds: new Set(TYPES.map((t) => t.id)), tolerance: '0' })).toEqual({});
    }
  });
});
