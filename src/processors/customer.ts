import type { TaxClient } from '../api/index.js';
import { mapCustomer, type MappingSettings } from '../mapping/index.js';
import { accepted, acceptedOutcome, deleted, notSent } from './outcome.js';
import { sentHash, unchanged } from './sent-hash.js';
import type { RecordHandler } from './types.js';

/** customer.upserted → PUT /v1/customers/; customer.deleted → DELETE by key. */
export function createCustomerHandler(deps: { tax: TaxClient; settings: MappingSettings }): RecordHandler {
  const handle: RecordHandler = async (event, ctx) => {
    switch (event.type) {
      case 'customer.upserted': {
        const mapped = mapCustomer(event.data, { key: ctx.record, settings: deps.settings });
        if (mapped.kind !== 'send') return notSent(mapped);
        const { source, external_id } = mapped.body;
        const hash = sentHash(mapped.body);
        const skip = unchanged(ctx, hash, 'customer');
        if (skip) return skip;
        await ctx.sending();
        const answer = await accepted(
          () => deps.tax.customers.upsert(mapped.body),
          async () => (await deps.tax.customers.getByKey(source, external_id)).id,
        );
        if (answer.kind === 'unreadable') return { ...acceptedOutcome('customer', answer, 'so it was read back by key'), sentHash: hash };
        return { kind: 'done', detail: `customer ${answer.record.id} upserted`, taxId: answer.record.id, sentHash: hash };
      }
      case 'customer.deleted':
        await ctx.sending({ keepCopy: true });
        return { ...(await deleted(() => deps.tax.customers.deleteByKey(ctx.record.source, ctx.record.external_id), 'customer')), sentHash: null };
      default:
        return { kind: 'done', detail: `nothing sent: ${event.type} is not a customer event` };
    }
  };
  // An upsert sends the customer as held and never waits: its read does sending()'s work.
  return Object.assign(handle, { sendsHeldEvent: ['customer.upserted'] as const });
}
