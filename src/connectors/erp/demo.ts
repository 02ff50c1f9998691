import type { ConnectorDemo } from '../types.js';
import { before, iso, uuidFrom } from '../shared/demo.js';

/**
 * `taxsync demo`'s ERP delivery (src/demo/samples.ts): one batch of canonical events — a customer
 * in Texas, its USD invoice, a California resale exemption.
 */
export function erpDemo({ run, now }: { run: string; now: Date }): ConnectorDemo {
  const customerId = `C-DEMO-${run}`;
  const invoiceId = `INV-DEMO-${run}`;
  const exemptionId = `EX-DEMO-${run}`;
  const certificateId = uuidFrom(run, 'erp-certificate');
  const year = now.getUTCFullYear();
  // `record.source` and `connector` are left out: the daemon fills in the ERP connector's
  // configured source, so the batch works whatever TAXSYNC_CONFIG says.
  const batch = [
    {
      id: `erp-demo-${run}-customer`,
      type: 'customer.upserted',
      occurred_at: iso(before(now, 3)),
      record: { kind: 'customer', external_id: customerId },
      data: {
        name: 'Contoso Wholesale LLC',
        email: `ap.${run}@contoso.example`,
        customer_type: 'wholesale',
        addresses: { billing: { street: '100 Congress Ave', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
      },
    },
    {
      id: `erp-demo-${run}-invoice`,
      type: 'invoice.upserted',
      occurred_at: iso(before(now, 2)),
      record: { kind: 'transaction', external_id: invoiceId },
      data: {
        number: invoiceId,
        issued_at: iso(before(now, 2)),
        status: 'active',
        currency: 'USD',
        tax_inclusive: false,
        customer: { external_id: customerId, name: 'Contoso Wholesale LLC' },
        addresses: { shipping: { street: '100 Congress Ave', city: 'Austin', state: 'TX', zip: '78701', country: 'US' } },
        lines: [
          { id: '1', sku: 'WID-1', name: 'Widget', unit_price: '10.50', quantity: '3', discount: '1.50' },
          { id: '2', sku: 'SVC-9', name: 'Installation', unit_price: '120.00', quantity: '1' },
        ],
        shipping: { amount: '4.90' },
        subtotal: '150.00',
        total: '154.90',
      },
    },
    {
      id: `erp-demo-${run}-exemption`,
      type: 'exemption.upserted',
      occurred_at: iso(before(now, 1)),
      record: { kind: 'exemption', external_id: exemptionId },
      data: {
        customer_external_id: customerId,
        country: 'US',
        // A California resale certificate: it does not touch the Texas invoice above.
        jurisdictions: ['CA'],
        start_date: `${year}-01-01`,
        certificate_id: certificateId,
        exemption_type: 'full',
      },
    },
  ];
  return {
    deliveries: [{ topic: 'batch', headers: {}, body: batch }],
    expected: [
      { record: 'customer', external_id: customerId },
      { record: 'invoice', external_id: invoiceId },
      { record: 'exemption', external_id: exemptionId, customer_external_id: customerId, certificate_id: certificateId },
    ],
  };
}
