import { describe, expect, it } from 'vitest';
import { LA, NYC, useEmulatorClients } from '../../helpers/emulator-clients.js';

// Exemptions and customers in the emulator's calculation, driven through taxsync's client. The
// assertions are on exact canonical amounts and reasons, so the variety is off here; the client
// against varied answers is varied-answers.test.ts.

describe('tax engine routes: exemptions and customers in the calculation', () => {
  const ctx = useEmulatorClients({ variety: 'strict', clock: () => Date.parse('2025-05-01T12:00:00Z') });

  it('applies a customer exemption only within its dates, by transaction_date', async () => {
    const { tax } = ctx.clients;
    const customer = await tax.customers.upsert({ source: 'api', external_id: 'c-1', customer_type: 'wholesale' });
    await tax.exemptions.create({ customer_id: customer.id, country: 'US', jurisdictions: ['NY'], start_date: '2025-02-01', end_date: '2025-02-28', exemption_type: 'full' });
    const invoice = (date: string) =>
      tax.transactions.upsert({
        source: 'api',
        external_id: `inv-${date}`,
        transaction_date: `${date}T09:00:00Z`,
        customer_details: { customer_id: customer.id },
        addresses: { shipping: NYC },
        items: [{ unit_price: '100' }],
      });
    expect((await invoice('2025-01-31')).tax?.total_tax).toBe('8.88');
    expect((await invoice('2025-02-01')).items?.[0]).toMatchObject({ taxability_reason: 'customer_exempt', is_exempt: true });
    expect((await invoice('2025-02-28')).tax?.total_tax).toBe('0.00');
    expect((await invoice('2025-03-01')).tax?.total_tax).toBe('8.88');
    // Shipping to a state the exemption does not list: taxed.
    const la = await tax.transactions.upsert({
      source: 'api',
      external_id: 'inv-la',
      transaction_date: '2025-02-10T09:00:00Z',
      customer_details: { customer_id: customer.id },
      addresses: { shipping: LA },
      items: [{ unit_price: '100' }],
    });
    expect(la.tax?.total_tax).toBe('9.50');
  });

  it('a transaction without transaction_date is checked against today; an item exemption_id applies to its item', async () => {
    const { tax } = ctx.clients;
    const customer = await tax.customers.upsert({ source: 'api', external_id: 'c-2' });
    const ex = await tax.exemptions.create({ customer_id: customer.id, country: 'US', start_date: '2025-04-01', exemption_type: 'partial', exemption_status: 'cancelled' });
    await tax.exemptions.update(ex.id, { customer_id: customer.id, country: 'US', start_date: '2025-04-01', exemption_type: 'partial' });
    const tx = await tax.transactions.upsert({
      source: 'api',
      external_id: 'inv-today',
      customer_details: { customer_external_id: 'c-2', customer_source: 'api' },
      addresses: { shipping: NYC },
      items: [{ unit_price: '100' }],
    });
    expect(tx.items?.[0]).toMatchObject({ taxability_reason: 'customer_exempt', is_exempt: false, tax: { total_tax: '4.88' } });
    await tax.exemptions.delete(ex.id);
    const after = await tax.transactions.upsert({ source: 'api', external_id: 'inv-today', customer_details: { customer_id: customer.id }, addresses: { shipping: NYC }, items: [{ unit_price: '100' }] });
    expect(after.tax?.total_tax).toBe('8.88');
  });

  it('retail_exempt customers are customer_exempt; the customer address is used when the transaction has none', async () => {
    const { tax } = ctx.clients;
    await tax.customers.upsert({ source: 'api', external_id: 'school', customer_type: 'retail_exempt', addresses: { shipping: LA } });
    const tx = await tax.transactions.upsert({
      source: 'api',
      external_id: 'inv-school',
      customer_details: { customer_external_id: 'school', customer_source: 'api' },
      items: [{ unit_price: '100' }],
      shipping_fee: { amount: '5' },
    });
    expect(tx.items?.[0]).toMatchObject({ taxability_reason: 'customer_exempt', is_exempt: true });
    expect(tx.tax?.total_tax).toBe('0.00');
    expect(tx.items?.[0]?.jurisdiction_tax_breakdown?.spd).toMatchObject({ tax_rate: '0.02', non_taxable_amount: '100.00', tax_due: '0.00' });
  });

  it('an inline customer is created when new and otherwise only its own fields change', async () => {
    const { tax } = ctx.clients;
    const existing = await tax.customers.upsert({ source: 'api', external_id: 'c-3', name: 'Old', customer_type: 'retail_exempt', email: 'a@b.c' });
    const tx = await tax.transactions.upsert({
      source: 'api',
      external_id: 'inv-inline',
      customer_details: { customer: { source: 'api', external_id: 'c-3', name: 'New name' } },
      addresses: { shipping: NYC },
      items: [{ unit_price: '10' }],
    });
    expect(tx.customer_details?.customer_id).toBe(existing.id);
    expect(tx.tax?.total_tax).toBe('0.00');
    expect(await tax.customers.get(existing.id)).toMatchObject({ name: 'New name', email: 'a@b.c', customer_type: 'retail_exempt' });
  });

  it('an invalid transaction does not write its inline customer', async () => {
    const res = await ctx.http('PUT', '/v1/transactions/', {
      json: { source: 'api', external_id: 'bad', customer_details: { customer: { source: 'api', external_id: 'ghost' } }, items: [{ unit_price: '1', discount: '2' }] },
    });
    expect(res.status).toBe(400);
    expect((await ctx.http('GET', '/v1/customers/api/ghost')).status).toBe(404);
  });

  it('a linked refund without addresses is taxed where its original was', async () => {
    const { tax } = ctx.clients;
    const invoice = await tax.transactions.upsert({ source: 'api', external_id: 'inv-r', addresses: { shipping: LA }, items: [{ unit_price: '200' }] });
    expect(invoice.tax?.total_tax).toBe('19.00');
    const refund = await tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-r',
      transaction_type: 'refund',
      created_from: invoice.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.25' },
      items: [{ unit_price: '50' }],
    });
    expect(refund.tax?.total_tax).toBe('4.75');
    expect(refund.items?.[0]).toMatchObject({ taxability_reason: 'standard_rated', tax: { total_tax: '4.75' } });
  });
});

