import type { TaxClient } from '../api/index.js';
import type { CanonicalEvent, InvoiceData } from '../domain/events.js';
import type { RecordKey } from '../domain/record-key.js';
import { mapCustomerFacts, mapInvoiceCustomer, type MappingSettings } from '../mapping/index.js';
import type { CustomerWriter, CustomerWriters } from '../queue/customer-writer.js';
import { accepted, notSent } from './outcome.js';
import { sentHash } from './sent-hash.js';
import type { HandlerOutcome } from './types.js';

/**
 * Runs `fn` as the customer's only writer (src/queue/customer-writer.ts); the lock is given back
 * however `fn` ends.
 */
export async function asCustomerWriter<T>(
  writers: CustomerWriters,
  customer: RecordKey,
  offer: Parameters<CustomerWriters['take']>[1],
  fn: (writer: CustomerWriter) => Promise<T>,
): Promise<T> {
  const writer = await writers.take(customer, offer);
  try {
    return await fn(writer);
  } finally {
    await writer.release();
  }
}

/**
 * docs/mapping.md, "Customer facts before the invoice": the invoice's customer facts (exempt flag,
 * type, tax number, addresses) reach PUT /v1/customers/ before the transaction that relies on them.
 * Under the customer's writer lock: the facts are kept as the customer's newest when the invoice is
 * newer than those held; nothing is sent when the customer's own newest event is newer than the
 * invoice (its job sends it) or when the engine already holds the body; otherwise the body of the
 * newest facts laid over the customer's own version is sent. Returns the outcome that stops the
 * invoice, if any.
 */
export async function invoiceCustomerFirst(
  deps: { tax: TaxClient; settings: MappingSettings; writers: CustomerWriters },
  event: CanonicalEvent,
  invoice: InvoiceData,
): Promise<HandlerOutcome | undefined> {
  const customer = invoice.customer;
  if (customer === undefined) return undefined;
  const key: RecordKey = { kind: 'customer', source: event.record.source, external_id: customer.external_id };
  // Checked alone first: facts that cannot be sent are never kept as the customer's newest.
  const alone = mapInvoiceCustomer(customer, { key, settings: deps.settings });
  if (alone.kind === 'ignore') return undefined;
  if (alone.kind !== 'send') return notSent(alone);
  const atMs = Date.parse(event.occurred_at);
  return asCustomerWriter(deps.writers, key, { customer, atMs }, async (writer) => {
    const { ownAtMs, applied, facts, sentHash: held } = writer.state;
    if (ownAtMs !== undefined && ownAtMs > atMs) return undefined;
    const own = applied?.type === 'customer.upserted' ? { data: applied.data, atMs: Date.parse(applied.occurred_at) } : undefined;
    const mapped = mapCustomerFacts(own, facts ? { data: facts.customer, atMs: facts.atMs } : { data: customer, atMs }, { key, settings: deps.settings });
    if (mapped.kind === 'ignore') return undefined;
    if (mapped.kind !== 'send') return notSent(mapped);
    const hash = sentHash(mapped.body);
    if (held === hash) return undefined;
    await writer.sending();
    // Only that the facts are stored matters here: an answer without a readable id is fine.
    await accepted(() => deps.tax.customers.upsert(mapped.body));
    await writer.accepted(hash);
    return undefined;
  });
}
