import { describe, expect, it } from 'vitest';
import type { TransactionRequest } from '../../../src/api/schemas/tax-engine.js';
import { mapInvoice, mapInvoiceCancelled } from '../../../src/mapping/invoice.js';
import { DOC_INVOICE, DOC_SETTINGS, ctx, invalidFields, invoiceData, key, sent } from './helpers.js';

const tx = (externalId = 'INV-1', settings = {}, source = 'api') => ctx('transaction', externalId, settings, source);

describe('mapInvoice: the whole body', () => {
  it('maps the documented example field by field (docs/mapping.md, "Invoice")', () => {
    const data = invoiceData(DOC_INVOICE);
    const body = sent(mapInvoice(data, tx('INV-2026-0815', DOC_SETTINGS)));
    expect(body).toEqual({
      source: 'api',
      external_id: 'INV-2026-0815',
      transaction_type: 'invoice',
      transaction_status: 'active',
      document_name: 'INV-2026-0815',
      transaction_date: '2026-11-20T09:00:00+01:00',
      is_tax_inclusive: false,
      currency_details: { currency: 'EUR' },
      addresses: {
        billing: { city: 'Berlin', zip: '10115', country: 'DE' },
        shipping: { street: 'Unter den Linden 1', city: 'Berlin', country: 'DE' },
      },
      customer_details: {
        customer: { external_id: 'C-2001', source: 'api', name: 'Contoso GmbH', external_created_at: '2026-01-05T08:00:00Z' },
      },
      items: [
        { name: 'Widget', unit_price: '10.5', quantity: '3', discount: '1.5' },
        { name: 'SVC-9', tax_code: 'S-CONSULT', unit_price: '120', quantity: '1' },
      ],
      transaction_level_discount: '5',
      shipping_fee: { amount: '4.9', tax_code: 'FR020100' },
      external_created_at: '2026-11-20T08:00:00Z',
      external_updated_at: '2026-11-20T08:30:00Z',
    } satisfies TransactionRequest);
  });

  it('takes source and external_id from the record key, never from the data', () => {
    const body = sent(mapInvoice(invoiceData({ number: 'SHOWN-NUMBER' }), tx('820982911', {}, 'shopify')));
    expect(body.source).toBe('shopify');
    expect(body.external_id).toBe('820982911');
    expect(body.document_name).toBe('SHOWN-NUMBER');
  });

  it.each(['active', 'paid', 'cancelled'] as const)('sends transaction_status %s as the source states it', (status) => {
    expect(sent(mapInvoice(invoiceData({ status }), tx())).transaction_status).toBe(status);
  });

  it('sends manual_exchange_rate only when the source states a rate', () => {
    expect(sent(mapInvoice(invoiceData(), tx())).currency_details).toEqual({ currency: 'USD' });
    expect(sent(mapInvoice(invoiceData({ currency: 'EUR', exchange_rate: '1.0825' }), tx())).currency_details).toEqual({
      currency: 'EUR',
      manual_exchange_rate: '1.0825',
    });
  });

  it('sends override_threshold and shipping_from only when configured', () => {
    const plain = sent(mapInvoice(invoiceData(), tx()));
    expect(plain).not.toHaveProperty('override_threshold');
    expect(plain).not.toHaveProperty('addresses');
    const configured = sent(
      mapInvoice(invoiceData({ addresses: { shipping: { zip: '94105', country: 'US' } } }), tx('INV-1', {
        override_threshold: true,
        shipping_from: { city: 'Austin', state: 'TX', country: 'US' },
      })),
    );
    expect(configured.override_threshold).toBe(true);
    expect(configured.addresses).toEqual({ shipping: { zip: '94105', country: 'US' }, shipping_from: { city: 'Austin', state: 'TX', country: 'US' } });
  });

  it('leaves out empty address fields and empty addresses', () => {
    const body = sent(mapInvoice(invoiceData({ addresses: { billing: { street: '', city: 'Austin' }, shipping: { street: '' } } }), tx()));
    expect(body.addresses).toEqual({ billing: { city: 'Austin' } });
  });
});

describe('mapInvoice: amounts are exact decimal strings', () => {
  it.each([
    {
      case: 'JPY (0 decimals)',
      currency: 'JPY',
      lines: [{ unit_price: '1000', quantity: '3', discount: '100' }],
      discount: '300',
      items: [{ unit_price: '1000', quantity: '3', discount: '100' }],
      tld: '300',
    },
    {
      case: 'KWD (3 decimals)',
      currency: 'KWD',
      lines: [{ unit_price: '1.250', quantity: '2', discount: '0.125' }, { unit_price: '0.005', quantity: '7' }],
      discount: '0.010',
      items: [{ unit_price: '1.25', quantity: '2', discount: '0.125' }, { unit_price: '0.005', quantity: '7' }],
      tld: '0.01',
    },
    {
      case: 'USD half-cent unit price (not rounded: the engine computes 0.125 × 3 = 0.375 → 0.38)',
      currency: 'USD',
      lines: [{ unit_price: '0.125', quantity: '3', discount: '0.38' }, { unit_price: '19.99', quantity: '1' }],
      discount: '0.01',
      items: [{ unit_price: '0.125', quantity: '3', discount: '0.38' }, { unit_price: '19.99', quantity: '1' }],
      tld: '0.01',
    },
    {
      case: 'USD fractional quantity',
      currency: 'USD',
      lines: [{ unit_price: '12.00', quantity: '1.5' }],
      discount: undefined,
      items: [{ unit_price: '12', quantity: '1.5' }],
      tld: undefined,
    },
    {
      case: 'negative credit line (negative unit price)',
      currency: 'USD',
      lines: [{ unit_price: '50.00', quantity: '2' }, { unit_price: '-5.00', quantity: '1' }],
      discount: undefined,
      items: [{ unit_price: '50', quantity: '2' }, { unit_price: '-5', quantity: '1' }],
      tld: undefined,
    },
    {
      case: 'negative quantity becomes a negative unit price (same line amount)',
      currency: 'USD',
      lines: [{ unit_price: '50.00', quantity: '2' }, { unit_price: '2.50', quantity: '-2' }],
      discount: undefined,
      items: [{ unit_price: '50', quantity: '2' }, { unit_price: '-2.5', quantity: '2' }],
      tld: undefined,
    },
    {
      case: 'zero-quantity line kept (items[i] stays lines[i])',
      currency: 'USD',
      lines: [{ unit_price: '9.99', quantity: '0' }, { unit_price: '10', quantity: '1' }],
      discount: undefined,
      items: [{ unit_price: '9.99', quantity: '0' }, { unit_price: '10', quantity: '1' }],
      tld: undefined,
    },
  ])('$case', ({ currency, lines, discount, items, tld }) => {
    const body = sent(mapInvoice(invoiceData({ currency, lines, ...(discount === undefined ? {} : { discount }) }), tx()));
    expect(body.items).toEqual(items);
    expect(body.transaction_level_discount).toBe(tld);
  });

  it('never sends a zero discount', () => {
    const body = sent(mapInvoice(invoiceData({ lines: [{ unit_price: '10', quantity: '1', discount: '0.00' }], discount: '0' }), tx()));
    expect(body.items?.[0]).not.toHaveProperty('discount');
    expect(body).not.toHaveProperty('transaction_level_discount');
  });
});

describe('mapInvoice: tax codes and manual rates', () => {
  const settings = {
    tax_codes: { by_sku: { A: 'SKU-CODE' }, by_product: { P: 'PRODUCT-CODE' }, default: 'DEFAULT-CODE' },
    manual_rates: { by_sku: { A: '0.0825' }, by_product: { P: '0.05' } },
  };

  it('takes the SKU setting, then the product setting, then the source code, then the default', () => {
    const lines = [
      { sku: 'A', product_id: 'P', tax_code: 'SOURCE-CODE', unit_price: '1', quantity: '1' },
      { sku: 'B', product_id: 'P', tax_code: 'SOURCE-CODE', unit_price: '1', quantity: '1' },
      { sku: 'B', product_id: 'Q', tax_code: 'SOURCE-CODE', unit_price: '1', quantity: '1' },
      { sku: 'B', product_id: 'Q', unit_price: '1', quantity: '1' },
    ];
    const body = sent(mapInvoice(invoiceData({ lines }), tx('INV-1', settings)));
    expect(body.items?.map((i) => i.tax_code)).toEqual(['SKU-CODE', 'PRODUCT-CODE', 'SOURCE-CODE', 'DEFAULT-CODE']);
    expect(body.items?.map((i) => i.manual_sales_tax_rate)).toEqual(['0.0825', '0.05', undefined, undefined]);
  });

  it('sends no tax_code and no manual rate when nothing is configured or given', () => {
    const body = sent(mapInvoice(invoiceData({ lines: [{ sku: 'A', unit_price: '1', quantity: '1' }] }), tx()));
    expect(body.items?.[0]).toEqual({ name: 'A', unit_price: '1', quantity: '1' });
  });
});

describe('mapInvoice: shipping fee', () => {
  it.each([
    { case: 'amount less its discount', shipping: { amount: '10.00', discount: '2.50' }, settings: {}, fee: { amount: '7.5' } },
    { case: "the source's tax code", shipping: { amount: '5', tax_code: 'FR-SRC' }, settings: {}, fee: { amount: '5', tax_code: 'FR-SRC' } },
    { case: 'the configured code wins', shipping: { amount: '5', tax_code: 'FR-SRC' }, settings: { tax_codes: { shipping: 'FR020100' } }, fee: { amount: '5', tax_code: 'FR020100' } },
    { case: 'JPY', shipping: { amount: '800', discount: '300' }, settings: {}, fee: { amount: '500' } },
    { case: 'fully discounted: null', shipping: { amount: '5.00', discount: '5.00' }, settings: {}, fee: null },
    { case: 'zero: null', shipping: { amount: '0.00' }, settings: {}, fee: null },
  ])('$case', ({ shipping, settings, fee }) => {
    expect(sent(mapInvoice(invoiceData({ shipping }), tx('INV-1', settings))).shipping_fee).toEqual(fee);
  });

  it('sends shipping_fee null when the invoice has no shipping, so an update clears an old fee', () => {
    expect(sent(mapInvoice(invoiceData(), tx())).shipping_fee).toBeNull();
  });
});

describe('mapInvoice: the inline customer', () => {
  it('carries the five inline fields with the record source, nothing else', () => {
    const data = invoiceData({
      customer: {
        external_id: '207119551',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        tax_exempt: true,
        created_at: '2026-01-01T00:00:00Z',
        updated_at: '2026-02-01T00:00:00Z',
      },
    });
    expect(sent(mapInvoice(data, tx('1001', {}, 'shopify'))).customer_details).toEqual({
      customer: {
        external_id: '207119551',
        source: 'shopify',
        name: 'Ada Lovelace',
        external_created_at: '2026-01-01T00:00:00Z',
        external_updated_at: '2026-02-01T00:00:00Z',
      },
    });
  });

  it('sends no customer_details when the invoice has no customer', () => {
    expect(sent(mapInvoice(invoiceData(), tx()))).not.toHaveProperty('customer_details');
  });
});

describe('mapInvoice: invalid invoices name the field and make no call', () => {
  it('refuses an invoice with no lines', () => {
    const result = mapInvoice(invoiceData({ lines: [] }), tx());
    expect(invalidFields(result)).toEqual({ items: [expect.stringMatching(/no lines/)] });
    expect(result.kind === 'invalid' && result.message).toMatch(/^invoice INV-1 cannot be sent: items: /);
  });

  it.each([
    { case: 'a discount above the line amount', lines: [{ unit_price: '10', quantity: '1', discount: '10.01' }], field: 'items[0].discount', message: /exceeds the line amount 10.00/ },
    { case: 'a half-cent discount above the rounded line amount', lines: [{ unit_price: '0.125', quantity: '3', discount: '0.381' }], field: 'items[0].discount', message: /exceeds the line amount 0.38/ },
    { case: 'a negative discount', lines: [{ unit_price: '10', quantity: '1', discount: '-1' }], field: 'items[0].discount', message: /must not be negative/ },
    { case: 'a discount on a credit line', lines: [{ unit_price: '10', quantity: '1' }, { unit_price: '-5', quantity: '1', discount: '1' }], field: 'items[1].discount', message: /positive amount/ },
    { case: 'a discount on a zero-quantity line', lines: [{ unit_price: '10', quantity: '0', discount: '1' }], field: 'items[0].discount', message: /positive amount/ },
  ])('$case', ({ lines, field, message }) => {
    expect(invalidFields(mapInvoice(invoiceData({ lines }), tx()))[field]).toEqual([expect.stringMatching(message)]);
  });

  it.each([
    { case: 'more decimals than JPY allows', currency: 'JPY', discount: '0.5', message: /more decimals than JPY allows \(0\)/ },
    { case: 'more decimals than KWD allows', currency: 'KWD', discount: '0.0005', message: /more decimals than KWD allows \(3\)/ },
    { case: 'above the items after their discounts', currency: 'USD', discount: '9.01', message: /exceeds the items' amount after their discounts \(9.00\)/ },
    { case: 'negative', currency: 'USD', discount: '-1', message: /must not be negative/ },
  ])('refuses a transaction-level discount $case', ({ currency, discount, message }) => {
    const lines = [{ unit_price: '10', quantity: '1', discount: '1' }, { unit_price: '-3', quantity: '1' }];
    expect(invalidFields(mapInvoice(invoiceData({ currency, lines, discount }), tx())).transaction_level_discount).toEqual([
      expect.stringMatching(message),
    ]);
  });

  it('refuses shipping whose discount exceeds it', () => {
    expect(invalidFields(mapInvoice(invoiceData({ shipping: { amount: '5', discount: '6' } }), tx()))['shipping_fee.amount']).toBeDefined();
  });

  it('refuses a zero exchange rate', () => {
    expect(invalidFields(mapInvoice(invoiceData({ exchange_rate: '0' }), tx()))['currency_details.manual_exchange_rate']).toBeDefined();
  });

  it('turns request-schema issues into field errors (a malformed source in the key)', () => {
    const fields = invalidFields(mapInvoice(invoiceData(), { ...tx(), key: { kind: 'transaction', source: 'Not A Source', external_id: 'INV-1' } }));
    expect(fields.source).toEqual(['expected a lowercase source identifier']);
  });

  it('refuses a record key of another kind', () => {
    expect(invalidFields(mapInvoice(invoiceData(), { ...tx(), key: key('customer', 'INV-1') }))['record.kind']).toBeDefined();
  });
});

describe('mapInvoiceCancelled', () => {
  const previous = invoiceData({ number: 'INV-1', status: 'paid', lines: [{ unit_price: '20', quantity: '2' }], shipping: { amount: '5' } });

  it('sends the previous invoice with transaction_status cancelled', () => {
    const body = sent(mapInvoiceCancelled({}, { ...tx(), previous }));
    expect(body.transaction_status).toBe('cancelled');
    expect(body.items).toEqual([{ unit_price: '20', quantity: '2' }]);
    expect(body.shipping_fee).toEqual({ amount: '5' });
  });

  it('lets the fields the cancellation states win over the previous data', () => {
    const stated = invoiceData({ number: 'INV-1-REV', lines: [{ unit_price: '20', quantity: '1' }] });
    const body = sent(mapInvoiceCancelled({ number: stated.number, lines: stated.lines }, { ...tx(), previous }));
    expect(body.document_name).toBe('INV-1-REV');
    expect(body.items).toEqual([{ unit_price: '20', quantity: '1' }]);
    expect(body.shipping_fee).toEqual({ amount: '5' });
  });

  it('sends a whole invoice cancelled even when taxsync never held it', () => {
    const { status: _status, ...whole } = invoiceData();
    expect(sent(mapInvoiceCancelled(whole, tx())).transaction_status).toBe('cancelled');
  });

  it('ignores a partial cancellation of an invoice taxsync never held', () => {
    const result = mapInvoiceCancelled({ currency: 'USD' }, tx());
    expect(result.kind).toBe('ignore');
    expect(result.kind === 'ignore' && result.reason).toMatch(/nothing to cancel/);
  });
});

describe('mapInvoice: lines that are not taxable supplies (issue 14, item 3)', () => {
  it('sends a gift card and a donation with manual_sales_tax_rate 0, also over a configured manual rate', () => {
    const data = invoiceData({
      lines: [
        { sku: 'BOOK', unit_price: '20', quantity: '1' },
        { sku: 'GIFT-50', name: 'Gift card', unit_price: '50', quantity: '1', taxable: false },
        { sku: 'DONATE', name: 'Donation', unit_price: '25', quantity: '1', taxable: false },
      ],
    });
    const body = sent(mapInvoice(data, tx('INV-1', { manual_rates: { by_sku: { 'GIFT-50': '0.0725', BOOK: '0.05' } } })));
    expect(body.items).toEqual([
      { name: 'BOOK', unit_price: '20', quantity: '1', manual_sales_tax_rate: '0.05' },
      { name: 'Gift card', unit_price: '50', quantity: '1', manual_sales_tax_rate: '0' },
      { name: 'Donation', unit_price: '25', quantity: '1', manual_sales_tax_rate: '0' },
    ]);
  });

  it('leaves a line marked taxable (or not marked) to the engine', () => {
    const body = sent(mapInvoice(invoiceData({ lines: [{ unit_price: '10', quantity: '1', taxable: true }] }), tx()));
    expect(body.items?.[0]).not.toHaveProperty('manual_sales_tax_rate');
  });
});
