import type { TaxClient } from '../api/index.js';
import { mapCustomerFacts, type MappingSettings } from '../mapping/index.js';
import type { CustomerWriters } from '../queue/customer-writer.js';
import { asCustomerWriter } from './customer-write.js';
import { accepted, acceptedOutcome, deleted, notSent } from './outcome.js';
import { sentHash } from './sent-hash.js';
import type { RecordHandler } from './types.js';

/**
 * customer.upserted → PUT /v1/customers/; customer.deleted → DELETE by key. Every write holds the
 * customer's writer lock (src/queue/customer-writer.ts): the invoices that state facts about the
 * customer write it too, and the body is the customer's own version with the newest of those
 * facts laid over it when they are newer. The hash of what the engine holds is kept under the
 * lock, never by the version's mark, which comes after the lock is given back.
 */
export function createCustomerHandler(deps: { tax: TaxClient; settings: MappingSettings; writers: CustomerWriters }): RecordHandler {
  return async (event, ctx) => {
    const key = ctx.record;
    switch (event.type) {
      case 'customer.upserted':
        return asCustomerWriter(deps.writers, key, undefined, async (writer) => {
          const facts = writer.state.facts;
          const own = { data: event.data, atMs: Date.parse(event.occurred_at) };
          const mapped = mapCustomerFacts(own, facts ? { data: facts.customer, atMs: facts.atMs } : undefined, { key, settings: deps.settings });
          if (mapped.kind !== 'send') return notSent(mapped);
          const hash = sentHash(mapped.body);
          if (writer.state.sentHash === hash) return { kind: 'done', unchanged: true, detail: 'nothing sent: the customer body is the one last accepted' };
          await ctx.sending();
          await writer.sending({ hashCleared: true });
          const answer = await accepted(
            () => deps.tax.customers.upsert(mapped.body),
            async () => (await deps.tax.customers.getByKey(key.source, key.external_id)).id,
          );
          await writer.accepted(hash);
          const laid = facts !== undefined && facts.atMs >= own.atMs ? ` (with the facts of an invoice of ${new Date(facts.atMs).toISOString()})` : '';
          if (answer.kind === 'unreadable') return acceptedOutcome(`customer${laid}`, answer, 'so it was read back by key');
          return { kind: 'done', detail: `customer ${answer.record.id} upserted${laid}`, taxId: answer.record.id };
        });
      case 'customer.deleted':
        return asCustomerWriter(deps.writers, key, undefined, async (writer) => {
          await ctx.sending({ keepCopy: true });
          await writer.sending({ hashCleared: true });
          const outcome = await deleted(() => deps.tax.customers.deleteByKey(key.source, key.external_id), 'customer');
          await writer.accepted(null);
          return outcome;
        });
      default:
        return { kind: 'done', detail: `nothing sent: ${event.type} is not a customer event` };
    }
  };
}
