import { describe, expect, it } from 'vitest';
import { mapXeroContact } from '../../../../src/connectors/xero/map.js';
import { XeroContact } from '../../../../src/connectors/xero/schemas.js';
import { countryCode } from '../../../../src/connectors/shared/countries.js';
import { SOURCE, apiFixture, records, wire } from './helpers.js';

/** GET /Contacts → customer.upserted: addresses POBOX → billing, STREET → shipping; countries as ISO codes. */

const ctx = { source: SOURCE };
const contacts = records(apiFixture('real-contacts-page-1').response.body, 'Contacts', XeroContact);

describe('the contacts page', () => {
  it('Liam Gallagher: GST number, postal address as billing and street address as shipping', () => {
    const [event] = wire(mapXeroContact(contacts[0]!.value, { ...ctx, path: contacts[0]!.path }));
    expect(event).toEqual({
      v: 1,
      id: 'xero:contact-430fa14a-f945-44d3-9f97-5df5e28441b8:1794795341902',
      type: 'customer.upserted',
      occurred_at: '2026-11-16T02:15:41.902Z',
      connector: 'xero',
      record: { kind: 'customer', source: SOURCE, external_id: '430fa14a-f945-44d3-9f97-5df5e28441b8' },
      data: {
        name: 'Liam Gallagher',
        email: 'liam@rockstar.com',
        tax_number: '123-456-789',
        addresses: {
          billing: { street: 'PO Box 10-112', city: 'Wellington', zip: '6143', country: 'NZ' },
          shipping: { street: '101 Grafton Road, Roseneath', city: 'Wellington', zip: '6011', country: 'NZ' },
        },
        status: 'ACTIVE',
        updated_at: '2026-11-16T02:15:41.902Z',
      },
    });
  });

  it('Lisa Parker: an empty STREET address and a blank TaxNumber are left out; AccountsReceivableTaxType NONE is no exemption', () => {
    const [event] = wire(mapXeroContact(contacts[1]!.value, ctx));
    expect(event!.data).toEqual({
      name: 'Lisa Parker',
      email: 'lparker@parkerandco.com',
      addresses: { billing: { street: '12 Cuba Street', city: 'Wellington', zip: '6011', country: 'NZ' } },
      status: 'ACTIVE',
      updated_at: '2026-11-19T00:02:26.760Z',
    });
  });

  it('Katherine Warren: an overseas postal address with no street lines', () => {
    const [event] = wire(mapXeroContact(contacts[2]!.value, ctx));
    expect(event!.data.addresses).toEqual({ billing: { city: 'Palo Alto', state: 'CA', zip: '94020', country: 'US' } });
  });
});

describe('who is a customer', () => {
  const raw = (apiFixture('real-contacts-page-1').response.body.Contacts as Record<string, unknown>[])[0]!;
  const variant = (overrides: Record<string, unknown>) => XeroContact.parse({ ...raw, ...overrides });

  it('ignores a supplier that is not a customer', () => {
    const result = mapXeroContact(variant({ IsSupplier: true, IsCustomer: false }), ctx);
    expect(result.kind).toBe('ignore');
  });

  it('sends a contact that is neither yet (Xero sets IsCustomer with its first sales invoice), and one that is both', () => {
    expect(mapXeroContact(variant({ IsSupplier: false, IsCustomer: false }), ctx).kind).toBe('events');
    expect(mapXeroContact(variant({ IsSupplier: true, IsCustomer: true }), ctx).kind).toBe('events');
  });

  it('names FirstName LastName when Name is blank', () => {
    expect(wire(mapXeroContact(variant({ Name: ' ' }), ctx))[0]!.data.name).toBe('Liam Gallagher');
  });

  it('refuses a contact without UpdatedDateUTC: nothing would order its versions', () => {
    expect(mapXeroContact(variant({ UpdatedDateUTC: undefined }), { ...ctx, path: 'Contacts[0].' })).toMatchObject({
      kind: 'invalid',
      fields: { 'Contacts[0].UpdatedDateUTC': [expect.any(String)] },
    });
  });
});

describe('countryCode', () => {
  it.each([
    ['New Zealand', 'NZ'],
    ['new zealand ', 'NZ'],
    ['NZ', 'NZ'],
    ['nz', 'NZ'],
    ['United States', 'US'],
    ['USA', 'US'],
    ['United States of America', 'US'],
    ['United Kingdom', 'GB'],
    ['UK', 'GB'],
    ['Australia', 'AU'],
    ['Germany', 'DE'],
    ['Curaçao', 'CW'],
    ['Cote d\'Ivoire', 'CI'],
    ['Côte d’Ivoire', 'CI'],
    ['Saint Kitts and Nevis', 'KN'],
    ['St. Kitts & Nevis', 'KN'],
    ['Myanmar', 'MM'],
    ['Turkey', 'TR'],
  ])('reads %j as %s', (text, code) => {
    expect(countryCode(text)).toBe(code);
  });

  it.each(['', 'Atlantis', 'European Union', 'EU', 'ZZ', 'DD', 'Wellington'])('knows no country in %j', (text) => {
    expect(countryCode(text)).toBeUndefined();
  });
});
