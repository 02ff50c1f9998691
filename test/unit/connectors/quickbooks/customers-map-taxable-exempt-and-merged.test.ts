import { describe, expect, it } from 'vitest';
import { mapQuickBooksCustomer, mapQuickBooksDeleted } from '../../../../src/connectors/quickbooks/map.js';
import { QboCustomer, QboCustomerQuery } from '../../../../src/connectors/quickbooks/schemas.js';
import { apiAnswer, only } from './qbo-fixtures.js';

const US = { source: 'quickbooks', companyCountry: 'US' };
const customers = QboCustomerQuery.parse(apiAnswer('real-query-customers-taxable-and-exempt.json')).QueryResponse.Customer;
const customer = (id: string) => customers.find((c) => c.Id === id)!;

describe('customers', () => {
  it('a taxable customer: not exempt, its addresses, the company country where QBO leaves it out', () => {
    const event = only(mapQuickBooksCustomer(customer('5'), US));
    const address = { street: '25 Court St.', city: 'Tucson', state: 'AZ', zip: '85719', country: 'US' };
    expect(event).toMatchObject({ type: 'customer.upserted', record: { kind: 'customer', source: 'quickbooks', external_id: '5' }, version: 1 });
    expect(event.data).toEqual({
      name: 'Dukes Basketball Camp',
      addresses: { billing: address, shipping: address },
      tax_exempt: false,
      status: 'active',
      created_at: '2015-10-01T23:54:59Z',
      updated_at: '2016-08-27T08:37:57Z',
    });
  });

  it('Taxable false is exempt (reason 99, Other); blank ResaleNum and PrimaryTaxIdentifier are no tax number', () => {
    const event = only(mapQuickBooksCustomer(customer('2'), US));
    expect(event.data).toMatchObject({ name: "Bill's Windsurf Shop", email: 'Surf@Intuit.com', tax_exempt: true });
    expect(event.data.tax_number).toBeUndefined();
  });

  it('a reseller (reason 9): exempt, its resale number as tax number', () => {
    const event = only(mapQuickBooksCustomer(customer('15'), US));
    expect(event.data).toMatchObject({ name: "Pye's Cakes", tax_exempt: true, tax_number: 'NJ-ST-4-071-2019' });
    expect(event.id).toBe('quickbooks:customer:15:1795021600000:4');
  });

  it('PrimaryTaxIdentifier wins over ResaleNum; an inactive customer says so; no DisplayName falls back to the names', () => {
    const raw = { Id: '99', SyncToken: '0', MetaData: { LastUpdatedTime: '2026-11-18T09:00:00-08:00' }, GivenName: 'Ana', FamilyName: 'Ruiz' };
    const event = only(mapQuickBooksCustomer(QboCustomer.parse({ ...raw, PrimaryTaxIdentifier: 'XX-123', ResaleNum: 'R-1', Active: false }), US));
    expect(event.data).toMatchObject({ name: 'Ana Ruiz', tax_number: 'XX-123', status: 'inactive' });
    expect(event.data.tax_exempt).toBeUndefined();
  });

  it('a country QBO users type is read as its ISO code; one taxsync does not know is left out, never guessed', () => {
    const raw = { Id: '98', MetaData: { LastUpdatedTime: '2026-11-18T09:00:00-08:00' }, DisplayName: 'X' };
    const withCountry = (Country: string) => only(mapQuickBooksCustomer(QboCustomer.parse({ ...raw, BillAddr: { Line1: '1 Main St', City: 'Austin', Country } }), US)).data;
    expect(withCountry('USA')).toMatchObject({ addresses: { billing: { country: 'US' } } });
    expect(withCountry('United Kingdom')).toMatchObject({ addresses: { billing: { country: 'GB' } } });
    expect(withCountry('Atlantis')).toEqual(expect.objectContaining({ addresses: { billing: { street: '1 Main St', city: 'Austin' } } }));
  });

  it('the customer a Merge took away (deletedId) is customer.deleted', () => {
    const event = only(mapQuickBooksDeleted('Customer', { Id: '58' }, { source: 'quickbooks', occurredAt: '2026-11-18T17:06:40.000Z' }));
    expect(event).toMatchObject({ type: 'customer.deleted', record: { kind: 'customer', external_id: '58' }, occurred_at: '2026-11-18T17:06:40Z', data: {} });
    expect(event.precedence).toBeUndefined();
  });

  it('a deletion with an unreadable time is refused', () => {
    expect(mapQuickBooksDeleted('Invoice', { Id: '1' }, { source: 'quickbooks', occurredAt: 'soon' }).kind).toBe('invalid');
  });
});
