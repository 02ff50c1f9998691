import { describe, expect, it } from 'vitest';
import type { CustomerRequest } from '../../../src/api/schemas/tax-engine.js';
import { mapCustomer, mapInvoiceCustomer } from '../../../src/mapping/customer.js';
import { ctx, customerData, invalidFields, key, sent } from './helpers.js';

const cust = (externalId = 'C-2001', settings = {}, source = 'api') => ctx('customer', externalId, settings, source);

describe('mapCustomer', () => {
  it('maps the documented example field by field (docs/mapping.md, "Customer")', () => {
    const data = customerData({
      name: 'Contoso GmbH',
      email: 'ap@contoso.example',
      tax_number: 'DE123456789',
      addresses: { billing: { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' } },
      status: 'enabled',
      created_at: '2026-01-05T08:00:00Z',
      updated_at: '2026-11-20T08:00:00Z',
    });
    expect(sent(mapCustomer(data, cust()), 'customer')).toEqual({
      source: 'api',
      external_id: 'C-2001',
      name: 'Contoso GmbH',
      email: 'ap@contoso.example',
      addresses: { billing: { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' } },
      tax_number: 'DE123456789',
      customer_type: 'retail',
      customer_status: 'enabled',
      external_created_at: '2026-01-05T08:00:00Z',
      external_updated_at: '2026-11-20T08:00:00Z',
    } satisfies CustomerRequest);
  });

  it('takes source and external_id from the record key', () => {
    const body = sent(mapCustomer(customerData({ name: 'Ada' }), cust('207119551', {}, 'shopify')), 'customer');
    expect(body).toEqual({ source: 'shopify', external_id: '207119551', name: 'Ada', customer_type: 'retail' });
  });

  it.each([
    { case: 'the stated type wins over the flag', data: { customer_type: 'wholesale' as const, tax_exempt: true }, type: 'wholesale' },
    { case: 'tax-exempt flag → retail_exempt', data: { tax_exempt: true }, type: 'retail_exempt' },
    { case: 'not exempt → retail', data: { tax_exempt: false }, type: 'retail' },
    { case: 'nothing said → retail', data: {}, type: 'retail' },
    { case: 'marketplace', data: { customer_type: 'marketplace' as const }, type: 'marketplace' },
  ])('customer_type: $case', ({ data, type }) => {
    expect(sent(mapCustomer(customerData(data), cust()), 'customer').customer_type).toBe(type);
  });

  it.each([
    { case: 'passes an unmapped status through', status: 'invited', settings: {}, expected: 'invited' },
    { case: 'maps a configured status', status: 'enabled', settings: { customer_status: { enabled: 'active' } }, expected: 'active' },
    { case: 'omits a status configured as null', status: 'declined', settings: { customer_status: { declined: null } }, expected: undefined },
    { case: 'omits an absent status', status: undefined, settings: { customer_status: { enabled: 'active' } }, expected: undefined },
  ])('customer_status $case', ({ status, settings, expected }) => {
    const body = sent(mapCustomer(customerData(status === undefined ? {} : { status }), cust('C-1', settings)), 'customer');
    expect(body.customer_status).toBe(expected);
  });

  it('sends only the address fields present and no empty address', () => {
    const data = customerData({ addresses: { billing: { city: 'Austin', street: '' }, shipping: {} } });
    expect(sent(mapCustomer(data, cust()), 'customer').addresses).toEqual({ billing: { city: 'Austin' } });
    expect(sent(mapCustomer(customerData({ addresses: { shipping: { zip: '' } } }), cust()), 'customer')).not.toHaveProperty('addresses');
  });

  it('refuses a record key of another kind, naming it', () => {
    expect(invalidFields(mapCustomer(customerData(), { ...cust(), key: key('transaction', 'C-1') }))).toEqual({
      'record.kind': ['expected a customer record, got transaction'],
    });
  });

  it('turns request-schema issues into field errors', () => {
    const result = mapCustomer(customerData(), { ...cust(), key: { kind: 'customer', source: 'api', external_id: '' } });
    expect(invalidFields(result).external_id).toBeDefined();
  });
});

describe('mapInvoiceCustomer: the facts an inline customer cannot carry (issue 14, item 5)', () => {
  it('ignores a customer with only inline fields (name, email, timestamps)', () => {
    const result = mapInvoiceCustomer({ external_id: 'C-1', name: 'Ada', email: 'ada@example.com' }, cust('C-1'));
    expect(result.kind).toBe('ignore');
  });

  it('sends an exempt customer as retail_exempt with its tax number and addresses', () => {
    const body = sent(
      mapInvoiceCustomer(
        { external_id: 'cus_1', name: 'Food Bank', tax_exempt: true, tax_number: '94-1234567', addresses: { billing: { city: 'San Francisco', state: 'CA', country: 'US' } } },
        cust('cus_1', {}, 'stripe'),
      ),
      'customer',
    );
    expect(body).toEqual({
      source: 'stripe',
      external_id: 'cus_1',
      name: 'Food Bank',
      addresses: { billing: { city: 'San Francisco', state: 'CA', country: 'US' } },
      tax_number: '94-1234567',
      customer_type: 'retail_exempt',
    } satisfies CustomerRequest);
  });

  it("lays the invoice's facts over the customer's own older record, so unstated facts are kept", () => {
    const known = customerData({ name: 'Contoso', email: 'ap@contoso.example', tax_number: 'DE123456789', status: 'active' });
    const body = sent(mapInvoiceCustomer({ external_id: 'C-2001', name: 'Contoso GmbH', customer_type: 'wholesale' }, { ...cust('C-2001'), known }), 'customer');
    expect(body).toEqual({
      source: 'api',
      external_id: 'C-2001',
      name: 'Contoso GmbH',
      email: 'ap@contoso.example',
      tax_number: 'DE123456789',
      customer_type: 'wholesale',
      customer_status: 'active',
    } satisfies CustomerRequest);
  });
});
