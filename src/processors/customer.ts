import type { TaxClient } from '../api/index.js';
import { mapCustomer, type MappingSettings } from '../mapping/index.js';
import { deleted, notSent } from './outcome.js';
import type { RecordHandler } from './types.js';

/** customer.upserted → PUT /v1/customers/; customer.deleted → DELETE by key. */
export function createCustomerHandler(deps: { tax: TaxClient; settings: MappingSettings }): RecordHandler {
  return async (event, ctx) => {
    switch (event.type) {
      case 'customer.upserted': {
        const mapped = mapCustomer(event.data, { key: ctx.record, settings: deps.settings });
        if (mapped.kind !== 'send') return notSent(mapped);
        const customer = await deps.tax.customers.upsert(mapped.body);
        return { kind: 'done', detail: `customer ${customer.id} upserted`, taxId: customer.id };
      }
      case 'customer.deleted':
        return deleted(() => deps.tax.customers.deleteByKey(ctx.record.source, ctx.record.external_id), 'customer');
      default:
        return { kind: 'done', detail: `nothing sent: ${event.type} is not a customer event` };
    }
  };
}
