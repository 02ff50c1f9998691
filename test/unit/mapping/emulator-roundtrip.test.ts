import { describe, expect, it } from 'vitest';
import { Money, formatDecimal, formatMoney, type Decimal } from '../../../src/domain/money.js';
import { mapCustomer } from '../../../src/mapping/customer.js';
import { mapExemption } from '../../../src/mapping/exemption.js';
import { mapInvoice } from '../../../src/mapping/invoice.js';
import { mapRefund } from '../../../src/mapping/refund.js';
import { invoiceAmount } from '../../../src/mapping/refund-fraction.js';
import { NYC, amount, useEmulatorClients as useEmulator } from '../../helpers/emulator-clients.js';
import { ctx, customerData, exemptionData, invoiceData, refundData, sent } from './helpers.js';

// The emulator is the contract's executable form: what the mappers send must be accepted as is.
describe('mapped bodies against the emulator', () => {
  const api = useEmulator();

  it("computes the same invoice amount the engine does (the refund fraction's denominator)", async () => {
    const invoice = invoiceData({
      addresses: { shipping: NYC },
      lines: [
        { unit_price: '0.125', quantity: '3' },
        { unit_price: '19.99', quantity: '2', discount: '1.99' },
        { unit_price: '-5', quantity: '1' },
      ],
      discount: '3.33',
      shipping: { amount: '7.50', discount: '2.50' },
    });
    const stored = await api.clients.tax.transactions.upsert(sent(mapInvoice(invoice, ctx('transaction', 'INV-RT-1'))));
    expect(stored.amounts?.final_transaction_amount).toBe(formatMoney(invoiceAmount(invoice), 2));
  });

  it('has three linked refunds of a third accepted, each with its share of the tax, and refuses a fourth locally', async () => {
    const invoice = invoiceData({ addresses: { shipping: NYC }, lines: [{ unit_price: '30', quantity: '3' }], customer: { external_id: 'C-RT' } });
    const original = await api.clients.tax.transactions.upsert(sent(mapInvoice(invoice, ctx('transaction', 'INV-RT-2'))));
    const originalTax = new Money(original.tax?.total_tax ?? 'NaN');
    expect(originalTax.greaterThan(0)).toBe(true);

    let already: Decimal = new Money(0);
    for (const n of [1, 2, 3]) {
      const refund = refundData({ invoice_external_id: 'INV-RT-2', amount: '30' });
      const result = mapRefund(refund, { ...ctx('transaction', `refund-RT-${n}`), original: { id: original.id, invoice }, alreadyRefunded: already });
      const stored = await api.clients.tax.transactions.upsert(sent(result));
      if (result.kind !== 'send') throw new Error('unreachable');
      expect(stored.refund_info?.refund_linked_percentage).toBe('0.3333333333');
      expect(amount(stored.tax?.total_tax)).toBe(amount(formatMoney(originalTax.times(result.fraction), 2)));
      already = already.plus(result.fraction);
    }
    expect(formatDecimal(already)).toBe('0.9999999999');
    const fourth = mapRefund(refundData({ invoice_external_id: 'INV-RT-2', amount: '0.01' }), {
      ...ctx('transaction', 'refund-RT-4'),
      original: { id: original.id, invoice },
      alreadyRefunded: already,
    });
    expect(fourth.kind).toBe('invalid');
  });

  it('has a customer and its exemption accepted', async () => {
    const customer = await api.clients.tax.customers.upsert(
      sent(mapCustomer(customerData({ name: 'Contoso', tax_exempt: true, addresses: { billing: NYC } }), ctx('customer', 'C-RT-3')), 'customer'),
    );
    expect(customer.customer_type).toBe('retail_exempt');
    const exemption = await api.clients.tax.exemptions.create(
      sent(mapExemption(exemptionData({ customer_external_id: 'C-RT-3', jurisdictions: ['NY'] }), { ...ctx('exemption', 'EX-RT'), customerId: customer.id }), 'exemption'),
    );
    expect(exemption.exemption_status).toBe('active');
  });
});
