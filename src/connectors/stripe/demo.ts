import type { ConnectorDemo } from '../types.js';
import { before, unix } from '../shared/demo.js';

/**
 * `taxsync demo`'s Stripe deliveries (src/demo/samples.ts): a finalized JPY invoice (zero-decimal,
 * tax included) and a credit note for one tin.
 */
export function stripeDemo({ run, now }: { run: string; now: Date }): ConnectorDemo {
  const invoiceId = `in_demo${run}`;
  const creditNoteId = `cn_demo${run}`;
  const customerId = `cus_demo${run}`;
  const jct = (amount: number, taxable: number) => ({ amount, inclusive: true, tax_rate: 'txr_demo_jp10', taxable_amount: taxable });
  const invoice = {
    id: invoiceId,
    object: 'invoice',
    number: `JP-${run}`,
    status: 'open',
    currency: 'jpy',
    created: unix(before(now, 2)),
    status_transitions: { finalized_at: unix(before(now, 2)), paid_at: null },
    customer: customerId,
    customer_name: '山田太郎',
    customer_email: `taro.${run}@example.jp`,
    customer_address: { line1: '1-1 Chiyoda', line2: null, city: 'Chiyoda', state: 'Tokyo', postal_code: '100-0001', country: 'JP' },
    customer_shipping: null,
    customer_tax_exempt: 'none',
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: 'il_demo_tea',
          object: 'line_item',
          amount: 3300,
          currency: 'jpy',
          description: 'Matcha tin',
          discount_amounts: [],
          quantity: 3,
          price: { id: 'price_demo_tea', product: 'prod_demo_tea', tax_behavior: 'inclusive', unit_amount: 1100, unit_amount_decimal: '1100' },
          tax_amounts: [jct(300, 3000)],
        },
        {
          id: 'il_demo_whisk',
          object: 'line_item',
          amount: 2200,
          currency: 'jpy',
          description: 'Bamboo whisk',
          discount_amounts: [],
          quantity: 1,
          price: { id: 'price_demo_whisk', product: 'prod_demo_whisk', tax_behavior: 'inclusive', unit_amount: 2200, unit_amount_decimal: '2200' },
          tax_amounts: [jct(200, 2000)],
        },
      ],
    },
    subtotal: 5500,
    subtotal_excluding_tax: 5000,
    tax: 500,
    total_tax_amounts: [jct(300, 3000), jct(200, 2000)],
    total: 5500,
    total_excluding_tax: 5000,
  };
  const creditNote = {
    id: creditNoteId,
    object: 'credit_note',
    number: `JP-${run}-CN-01`,
    status: 'issued',
    type: 'post_payment',
    currency: 'jpy',
    created: unix(before(now, 1)),
    customer: customerId,
    invoice: invoiceId,
    reason: 'product_unsatisfactory',
    memo: 'one tin arrived dented',
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: 'cnli_demo_tea',
          object: 'credit_note_line_item',
          type: 'invoice_line_item',
          invoice_line_item: 'il_demo_tea',
          amount: 1100,
          description: 'Matcha tin',
          quantity: 1,
          unit_amount: 1100,
          unit_amount_decimal: '1100',
          discount_amount: 0,
          discount_amounts: [],
          tax_amounts: [jct(100, 1000)],
        },
      ],
    },
    shipping_cost: null,
    subtotal: 1100,
    subtotal_excluding_tax: 1000,
    discount_amount: 0,
    tax_amounts: [jct(100, 1000)],
    amount: 1100,
    total: 1100,
    total_excluding_tax: 1000,
  };
  const event = (suffix: string, type: string, object: unknown) => ({
    id: `evt_demo${run}${suffix}`,
    object: 'event',
    api_version: '2024-06-20',
    created: unix(now),
    type,
    data: { object },
  });
  return {
    deliveries: [
      { topic: 'invoice.finalized', headers: {}, body: event('inv', 'invoice.finalized', invoice) },
      { topic: 'credit_note.created', headers: {}, body: event('cn', 'credit_note.created', creditNote) },
    ],
    expected: [
      { record: 'invoice', external_id: invoiceId },
      { record: 'refund', external_id: `refund-${creditNoteId}`, invoice_external_id: invoiceId },
    ],
  };
}
