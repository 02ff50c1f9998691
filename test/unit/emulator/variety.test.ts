import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { startEmulator, type VarietyMode } from '../../../src/emulator/index.js';
import { ENTITY, LA, NYC, rawHttp, useEmulator, vatBody, type RawResponse, type Running } from './helpers.js';

// The legitimate variety of a real service (docs/emulator.md, "Variety"): each variation appears,
// is drawn per record and deterministic, `strict` turns it off, and the facts never vary.

const LONDON = { street: '10 Downing St', city: 'London', zip: 'SW1A 2AA', country: 'GB' };
const DUBAI = { street: '1 Sheikh Zayed Rd', city: 'Dubai', country: 'AE' };
const B2C_SALES = 'b2c5a1e5-0000-4000-8000-000000000002';

type Http = (method: string, path: string, json?: unknown) => Promise<RawResponse>;

function client(emulator: Running): Http {
  let token: string | undefined;
  const bearer = async () => {
    if (token !== undefined) return token;
    const res = await rawHttp(emulator.url, 'POST', '/v1/auth/token', async () => null, { json: { client_id: 'taxsync-dev', client_secret: 'taxsync-dev-secret' } });
    token = res.body.access_token as string;
    return token;
  };
  return (method, path, json) => rawHttp(emulator.url, method, path, bearer, json === undefined ? {} : { json });
}

/** One of every kind of record, as a test script: the answers in order. */
async function everyKind(http: Http) {
  const customer = await http('PUT', '/v1/customers/', { source: 'api', external_id: 'c-uk', addresses: { billing: LONDON } });
  const invoice = await http('PUT', '/v1/transactions/', {
    source: 'api',
    external_id: 'inv-la',
    transaction_date: '2025-03-01T10:00:00Z',
    customer_details: { customer_id: customer.body.id },
    addresses: { shipping: LA, billing: LONDON },
    items: [
      { name: 'Widget', unit_price: '100.00', quantity: '2' },
      { name: 'E-book', unit_price: '10.00', tax_code: 'digital' },
    ],
    shipping_fee: { amount: '10.00' },
  });
  const abroad = await http('PUT', '/v1/transactions/', { source: 'api', external_id: 'inv-uk', addresses: { shipping: LONDON }, items: [{ unit_price: '5' }] });
  const dubai = await http('PUT', '/v1/customers/', { source: 'api', external_id: 'c-ae', addresses: { shipping: DUBAI } });
  const exemption = await http('POST', '/v1/exemptions/', { customer_id: customer.body.id, country: 'US', start_date: '2025-01-01', exemption_type: 'partial' });
  const registration = await http('POST', '/registrations/v1/registrations/', {
    taxable_jurisdiction: 'DE',
    entity: ENTITY,
    date_of_registration: '2020-01-01',
    date_registration_closed: '2099-12-31',
  });
  const ej = registration.body.entity_jurisdiction as string;
  const vat = await http('POST', '/api/vat/v1/transactions/', vatBody(ej, { transaction_type_id: B2C_SALES, vat_number: undefined }));
  const filing = await http('POST', '/api/filing/v1/filings/', { registration_filing_type: registration.body.id, reporting_period_start: '2025-03-01', reporting_period_end: '2025-03-31' });
  return {
    customer,
    invoice,
    abroad,
    dubai,
    exemption,
    registration,
    vat,
    filing,
    customers: await http('GET', '/v1/customers/'),
    invoiceAgain: await http('GET', `/v1/transactions/${invoice.body.id}`),
    files: await http('GET', `/api/filing/v1/filings/${filing.body.id}/files/`),
    boxes: await http('GET', `/api/filing/v1/filings/${filing.body.id}/draft-return-boxes/`),
    types: await http('GET', '/api/vat/v1/transaction-types/'),
  };
}

type Script = Awaited<ReturnType<typeof everyKind>>;
/** The answers by name, for loops over all of them. */
const byName = (script: Script) => script as unknown as Record<string, RawResponse>;

async function run(mode: VarietyMode, seed = 1): Promise<Script> {
  const emulator = await startEmulator({ variety: mode, varietySeed: seed, clock: () => Date.parse('2025-04-15T12:00:00Z') });
  try {
    return await everyKind(client(emulator));
  } finally {
    await emulator.close();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
/** A body with its random parts (ids, times, ports) blanked, to compare two emulators' answers. */
const shapeOf = (body: unknown) => JSON.stringify(body).replace(UUID, '<id>').replace(TIMESTAMP, '<time>').replace(/127\.0\.0\.1:\d+/g, '<host>');
const value = (text: unknown) => new Decimal(text as string).toFixed();
const fileTypes = (res: RawResponse) => (res.body.results as { file_type: string }[]).map((f) => f.file_type);

describe('max: every variation at once', () => {
  it('tax engine: nulls, extra fields, omitted parts, addresses without state, later enum values, scales and numbers', async () => {
    const a = await run('max');
    // nulls in optional fields, unknown extra fields
    expect(a.customer.body).toMatchObject({ email: null, tax_number: null, comment: null, customer_type: null, object: 'customer', livemode: false, metadata: {} });
    expect(a.customer.body.addresses).toMatchObject({ shipping: null, billing: { state: null, x_region: 'intl' } });
    const invoice = a.invoice.body;
    expect(invoice).toMatchObject({ object: 'transaction', document_name: null, refund_info: null, created_from: null, shipping_fee: { object: 'shipping_fee' } });
    expect(invoice.customer_details).toMatchObject({ customer_type_override: null });
    expect(invoice.currency_details).not.toHaveProperty('exchange_rate_info');
    expect(invoice.currency_details.manual_exchange_rate).toBeNull();
    // a UK billing address without a state; the US geocoding result with numbers and a finer level
    expect(invoice.addresses.billing.state).toBeNull();
    expect(invoice.addresses.shipping.matched_address).toMatchObject({ match_level: 'rooftop', latitude: 34.0522, longitude: -118.2437, confidence: 1 });
    expect(a.abroad.body.addresses.shipping.matched_address.address).toMatchObject({ country: 'GB', state: null });
    expect(a.dubai.body.addresses.shipping).toMatchObject({ state: null, zip: null });
    // items: null description, extras, a later taxability reason, no breakdown where nothing is taxed
    const [widget, ebook] = invoice.items;
    expect(widget).toMatchObject({ description: null, object: 'line_item', taxability_reason: 'standard_rated' });
    expect(Object.values(widget.jurisdiction_tax_breakdown as object).every((entry) => typeof (entry as { jurisdiction_code?: unknown }).jurisdiction_code === 'string')).toBe(true);
    expect(ebook).toMatchObject({ taxability_reason: 'digital_service_exempt', tangible_category: 'digital', taxable_category: 'exempt' });
    expect(ebook).not.toHaveProperty('jurisdiction_tax_breakdown');
    // Decimals with another scale, same value. LA: 9.5% of 200.00 = 19.00; the e-book is exempt in CA;
    // shipping 10.00 per level: 0.725 → 0.73, 0.025 → 0.03, 0.20: 0.96; total 19.96.
    expect(invoice.tax.total_tax).not.toBe('19.96');
    expect(value(invoice.tax.total_tax)).toBe('19.96');
    expect(value(invoice.amounts.final_transaction_amount)).toBe('220');
    expect(a.exemption.body).toMatchObject({ certificate_id: null, object: 'exemption' });
    expect(a.customers.body).toMatchObject({ object: 'list', url: '/v1/customers/', cursors: { total_count: null } });
  });

  it('VAT service: pending_review, a later registration status and filing status, a later file type, scales', async () => {
    const a = await run('max');
    expect(a.vat.status).toBe(201);
    expect(a.vat.body).toMatchObject({ compliance_status: 'pending_review', validity_status: 'valid', vat_number: null, object: 'vat_transaction' });
    expect(value(a.vat.body.gross)).toBe('119');
    expect(a.vat.body.gross).not.toBe('119.00');
    expect(a.registration.body).toMatchObject({ status: 'deregistration_pending', iban: null, object: 'registration', number: '' });
    expect(a.filing.body.status).toBe('in_preparation');
    expect(a.filing.body).not.toHaveProperty('submitted_date');
    expect(fileTypes(a.files)).toEqual(['vat_return', 'audit_trail']);
    expect(value(a.boxes.body.total_vat_due)).toBe('19');
    expect(a.types.body.results[0]).toMatchObject({ code: 'B2B_SALES', is_active: true });
  });
});

describe('strict: the canonical answers', () => {
  it('carries no variation at all', async () => {
    const a = await run('strict');
    expect(Object.keys(a.customer.body as object).sort()).toEqual(['addresses', 'created_at', 'external_id', 'id', 'source', 'updated_at']);
    expect(a.customer.body.addresses).toEqual({ billing: LONDON });
    expect(a.invoice.body.currency_details).toEqual({ currency: 'USD', exchange_rate_info: null });
    expect(a.invoice.body.customer_details).not.toHaveProperty('customer_type_override');
    expect(a.invoice.body.tax.total_tax).toBe('19.96');
    expect(a.invoice.body.addresses.shipping.matched_address).toMatchObject({ match_level: 'street', latitude: '34.0522', confidence: '1.00' });
    expect(a.invoice.body.items[1]).toMatchObject({ taxability_reason: 'product_exempt', tangible_category: 'intangible', taxable_category: 'not_taxable' });
    expect(a.abroad.body.addresses.shipping.matched_address.address).not.toHaveProperty('state');
    expect(a.vat.body).toMatchObject({ compliance_status: 'valid', gross: '119.00' });
    expect(a.vat.body).not.toHaveProperty('vat_number');
    expect(a.registration.body).toMatchObject({ status: 'active', iban: '' });
    expect(a.filing.body).toMatchObject({ status: 'draft', submitted_date: null });
    expect(fileTypes(a.files)).toEqual(['vat_return']);
    const all = JSON.stringify(Object.values(byName(a)).map((r): unknown => r.body));
    for (const extra of ['"object"', '"livemode"', '"_links"', '"x_region"', '"metadata"']) expect(all).not.toContain(extra);
  });
});

describe('the facts never vary', () => {
  it('statuses, ids, keys and the value of every amount are those of the canonical answers', async () => {
    const [strict, max, varied] = await Promise.all([run('strict'), run('max'), run('varied')]);
    for (const name of Object.keys(strict)) {
      for (const other of [max, varied].map(byName)) {
        expect(other[name]!.status, name).toBe(byName(strict)[name]!.status);
        for (const field of ['source', 'external_id', 'transaction_type', 'transaction_status', 'invoice_number', 'validity_status', 'committed', 'registration_type', 'currency']) {
          expect(other[name]!.body?.[field], `${name}.${field}`).toEqual(byName(strict)[name]!.body?.[field]);
        }
      }
    }
    const amounts = (r: Script) => ({
      invoice: [r.invoice.body.tax.total_tax, ...Object.values(r.invoice.body.amounts as Record<string, string>), ...(r.invoice.body.items as { tax: { total_tax: string } }[]).map((i) => i.tax.total_tax)].map(value),
      vat: ['net', 'vat', 'gross', 'vat_rate'].map((f) => value(r.vat.body[f])),
      filing: [value(r.filing.body.total_vat_due), value(r.filing.body.total_net)],
      boxes: (r.boxes.body.boxes as { value: string }[]).map((b) => value(b.value)),
    });
    expect(amounts(max)).toEqual(amounts(strict));
    expect(amounts(varied)).toEqual(amounts(strict));
  });
});

describe('varied (the default): drawn per record, deterministic', () => {
  it('gives the same answers for the same records in two emulators with the same seed, and others with another seed', async () => {
    const [first, second, reseeded] = await Promise.all([run('varied'), run('varied'), run('varied', 2)]);
    for (const name of Object.keys(first)) expect(shapeOf(byName(second)[name]!.body), name).toBe(shapeOf(byName(first)[name]!.body));
    expect(Object.keys(first).some((name) => shapeOf(byName(reseeded)[name]!.body) !== shapeOf(byName(first)[name]!.body))).toBe(true);
  });

  it('answers one record the same way on every read', async () => {
    const a = await run('varied');
    expect(shapeOf(a.invoiceAgain.body)).toBe(shapeOf(a.invoice.body));
  });

  const ctx = useEmulator({ variety: 'varied' });

  it('varies some records and not others, for each kind of variation', async () => {
    const bodies: Record<string, unknown>[] = [];
    for (let i = 0; i < 40; i += 1) {
      const res = await ctx.http('PUT', '/v1/transactions/', {
        json: { source: 'api', external_id: `t-${i}`, addresses: { shipping: i % 2 === 0 ? NYC : LONDON }, items: [{ unit_price: '10.00' }, { unit_price: '3.00', tax_code: 'exempt' }] },
      });
      bodies.push(res.body as Record<string, unknown>);
    }
    const has = {
      nulls: (b: Record<string, unknown>) => b.document_name === null,
      extras: (b: Record<string, unknown>) => b.object === 'transaction',
      omissions: (b: Record<string, unknown>) => !('exchange_rate_info' in (b.currency_details as object)),
      decimals: (b: Record<string, unknown>) => (b.amounts as { total_items_amount: string }).total_items_amount !== '13.00',
      enums: (b: Record<string, unknown>) => (b.items as { taxability_reason: string }[])[1]!.taxability_reason !== 'product_exempt',
      addresses: (b: Record<string, unknown>) =>
        (b.addresses as { shipping: { country: string; state?: unknown } }).shipping.country === 'GB' &&
        (b.addresses as { shipping: { state?: unknown } }).shipping.state === null,
    };
    for (const [knob, test] of Object.entries(has)) {
      const count = bodies.filter(test).length;
      expect(count, knob).toBeGreaterThan(0);
      expect(count, knob).toBeLessThan(bodies.length);
    }
  });

  it('is switched at run time through the control API, and reset goes back to the option', async () => {
    const put = () => ctx.http('PUT', '/v1/customers/', { json: { source: 'api', external_id: 'c-switch' } });
    expect((await ctx.http('PUT', '/__emulator/variety', { json: { mode: 'max' }, token: null })).body).toEqual({ mode: 'max', seed: 1 });
    expect((await put()).body).toMatchObject({ email: null, object: 'customer' });
    await ctx.http('PUT', '/__emulator/variety', { json: { mode: 'strict' }, token: null });
    expect(Object.keys((await put()).body as object).sort()).toEqual(['created_at', 'external_id', 'id', 'source', 'updated_at']);
    expect((await ctx.http('PUT', '/__emulator/variety', { json: { mode: 'wild' }, token: null })).status).toBe(400);
    await ctx.http('POST', '/__emulator/reset', { token: null });
    expect((await ctx.http('GET', '/__emulator/variety', { token: null })).body).toEqual({ mode: 'varied', seed: 1 });
  });
});

it('an unknown variety is refused when the emulator is built', async () => {
  await expect(() => startEmulator({ variety: 'wild' as VarietyMode })).rejects.toThrow(/variety must be one of varied, strict, max/);
});
