import { describe, expect, it } from 'vitest';
import { ENTITY, LA, amount, useEmulatorClients, vatBody } from '../../helpers/emulator-clients.js';

// taxsync's client against the emulator's `max` variety: every legitimate variation of a real
// service at once (docs/emulator.md, "Variety"). A client that is a tolerant reader reads each
// answer and keeps its meaning; one that dead-letters a 2xx for a null or an extra field fails here.
// Each test reaches one endpoint through the client (what it needs first is made with plain HTTP),
// so a failure names that endpoint and its drift.

const LONDON = { street: '10 Downing St', city: 'London', zip: 'SW1A 2AA', country: 'GB' };
const B2C_SALES = 'b2c5a1e5-0000-4000-8000-000000000002';
const INVOICE = {
  source: 'api',
  external_id: 'inv-1',
  transaction_date: '2025-03-01T10:00:00Z',
  customer_details: { customer: { source: 'api', external_id: 'c-inline', name: 'Inline Ltd' } },
  addresses: { shipping: LA, billing: LONDON },
  items: [
    { name: 'Widget', unit_price: '100.00', quantity: '2' },
    { name: 'E-book', unit_price: '10.00', tax_code: 'digital' },
  ],
};

describe('the client reads every varied answer of the tax engine', () => {
  const ctx = useEmulatorClients({ variety: 'max' });
  const put = async (path: string, json: unknown) => (await ctx.http('PUT', path, { json })).body as { id: string };

  it('tokens (variant B) and verify', async () => {
    expect((await ctx.clients.tax.verify()).sub).toBe('taxsync-dev');
  });

  it('customers.upsert', async () => {
    const created = await ctx.clients.tax.customers.upsert({ source: 'api', external_id: 'c-uk', addresses: { billing: LONDON } });
    expect(created).toMatchObject({ source: 'api', external_id: 'c-uk' });
  });

  it('customers.get, customers.getByKey and customers.list', async () => {
    const { id } = await put('/v1/customers/', { source: 'api', external_id: 'c-uk', addresses: { billing: LONDON } });
    const { customers } = ctx.clients.tax;
    expect((await customers.get(id)).id).toBe(id);
    expect((await customers.getByKey('api', 'c-uk')).id).toBe(id);
    expect((await customers.list()).data.map((c) => c.id)).toEqual([id]);
  });

  it('exemptions.create, get, update and list', async () => {
    const customer = await put('/v1/customers/', { source: 'api', external_id: 'c-ex' });
    const { exemptions } = ctx.clients.tax;
    const exemption = await exemptions.create({ customer_id: customer.id, country: 'US', start_date: '2025-01-01', exemption_type: 'partial' });
    expect((await exemptions.get(exemption.id)).id).toBe(exemption.id);
    const updated = await exemptions.update(exemption.id, { customer_id: customer.id, country: 'US', start_date: '2025-01-01', exemption_type: 'full' });
    expect(updated.exemption_type).toBe('full');
    expect((await exemptions.list()).data).toHaveLength(1);
  });

  it('transactions.upsert: an invoice with computed tax', async () => {
    const invoice = await ctx.clients.tax.transactions.upsert(INVOICE);
    // LA 9.5% of 200.00 = 19.00; the e-book is exempt in California.
    expect(amount(invoice.tax?.total_tax)).toBe('19');
  });

  it('transactions.get, getByKey and list', async () => {
    const { id } = await put('/v1/transactions/', INVOICE);
    const { transactions } = ctx.clients.tax;
    expect((await transactions.get(id)).id).toBe(id);
    expect((await transactions.getByKey('api', 'inv-1')).id).toBe(id);
    expect((await transactions.list()).data.map((t) => t.id)).toEqual([id]);
  });

  it('transactions.upsert: a linked refund', async () => {
    const { id } = await put('/v1/transactions/', INVOICE);
    const refund = await ctx.clients.tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-inv-1-1',
      transaction_type: 'refund',
      created_from: id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' },
      items: [{ unit_price: '100.00' }],
    });
    // 19.00 × 0.5 = 9.50
    expect(amount(refund.tax?.total_tax)).toBe('9.5');
  });

  it('transactions.upsert: shipped to the United Kingdom (a matched address without a state)', async () => {
    const tx = await ctx.clients.tax.transactions.upsert({ source: 'api', external_id: 'inv-uk', addresses: { shipping: LONDON }, items: [{ unit_price: '5.00' }] });
    expect(tx.addresses?.shipping?.matched_address?.address?.country).toBe('GB');
  });
});

describe('the client reads every varied answer of the VAT service', () => {
  const ctx = useEmulatorClients({ variety: 'max', clock: () => Date.parse('2025-04-15T12:00:00Z') });
  const post = async (path: string, json: unknown) => (await ctx.http('POST', path, { json })).body as { id: string; entity_jurisdiction: string };
  const registration = () => post('/registrations/v1/registrations/', { taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2020-01-01' });
  /** A registration, one B2B sale of 100.00 + 19.00 VAT in March 2025, and the filing of March. */
  const filing = async () => {
    const reg = await registration();
    await post('/api/vat/v1/transactions/', vatBody(reg.entity_jurisdiction));
    return post('/api/filing/v1/filings/', { registration_filing_type: reg.id, reporting_period_start: '2025-03-01', reporting_period_end: '2025-03-31' });
  };

  it('vat.transactionTypes', async () => {
    expect((await ctx.clients.vat.transactionTypes()).map((t) => t.name)).toContain('B2C Sales');
  });

  it('registrations.create', async () => {
    const created = await ctx.clients.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: ENTITY });
    expect(created.registration_type).toBe('standard');
  });

  it('registrations.get, list and update of an active registration', async () => {
    const { id } = await registration();
    const { registrations } = ctx.clients.vat;
    expect((await registrations.get(id)).id).toBe(id);
    expect((await registrations.list()).count).toBe(1);
    const updated = await registrations.update(id, { taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2020-01-01', number: 'DE123456789' });
    expect(updated.number).toBe('DE123456789');
  });

  it('registrations.patch: a closing date ahead (deregistration under way)', async () => {
    const { id } = await registration();
    const closing = await ctx.clients.vat.registrations.patch(id, { date_registration_closed: '2099-12-31' });
    expect(closing.date_registration_closed).toBe('2099-12-31');
  });

  it('vat.submitTransaction answered 201', async () => {
    const reg = await registration();
    const result = await ctx.clients.vat.submitTransaction(vatBody(reg.entity_jurisdiction, { transaction_type_id: B2C_SALES, vat_number: undefined }) as never);
    expect(result).toMatchObject({ status: 201, withWarnings: false });
  });

  it('filings.create and get', async () => {
    const reg = await registration();
    await post('/api/vat/v1/transactions/', vatBody(reg.entity_jurisdiction));
    const created = await ctx.clients.vat.filings.create({ registration_filing_type: reg.id, reporting_period_start: '2025-03-01', reporting_period_end: '2025-03-31' });
    expect(amount(created.total_vat_due)).toBe('19');
    expect((await ctx.clients.vat.filings.get(created.id)).id).toBe(created.id);
  });

  it('filings.files', async () => {
    const { id } = await filing();
    expect((await ctx.clients.vat.filings.files(id)).map((f) => f.file_type)).toContain('vat_return');
  });

  it('filings.draftReturnBoxes', async () => {
    const { id } = await filing();
    expect(amount((await ctx.clients.vat.filings.draftReturnBoxes(id)).total_vat_due)).toBe('19');
  });

  it('filings.approve', async () => {
    const { id } = await filing();
    expect((await ctx.clients.vat.filings.approve(id)).status).toBe('approved');
  });
});
