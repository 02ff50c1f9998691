import type { ConnectorDemo } from '../../../src/connectors/types.js';

/** Acme's sample for `taxsync demo`: one customer, its ids carrying the run. */
export function acmeDemo({ run, now }: { run: string; now: Date }): ConnectorDemo {
  const customerId = `ACME-DEMO-${run}`;
  return {
    deliveries: [
      {
        topic: 'customer.saved',
        headers: {},
        body: { type: 'customer.saved', delivery_id: `acme-demo-${run}`, occurred_at: now.toISOString(), customer: { id: customerId, name: 'Acme Demo Ltd' } },
      },
    ],
    expected: [{ record: 'customer', external_id: customerId }],
  };
}
