import { keyPart } from '../domain/key-part.js';

/**
 * Every Redis key taxsync writes besides BullMQ's own, all under the one hash-tagged prefix so a
 * Redis Cluster keeps an installation in one slot (no CROSSSLOT errors in MULTI or Lua).
 */
export interface Keys {
  readonly prefix: string;
  /** Hash: the latest-state store's small fields of one record (seq, applied seq, tax id…). */
  state(recordKey: string): string;
  /** Set of record keys with events not yet applied (for recovery sweeps). */
  readonly dirty: string;
  /** String: a record's newest event while it is not yet applied (then renamed to `applied`). */
  event(recordKey: string): string;
  /** String: the version of a record last applied (or dead-lettered). */
  applied(recordKey: string): string;
  /** List: a record's bounded history for `taxsync trace`. */
  trace(recordKey: string): string;
  /** String: a webhook delivery already accepted (dedupe). */
  delivery(connector: string, deliveryId: string): string;
  /** Hash: counters (stale drops, duplicates…) read by metrics and status. */
  readonly counters: string;
  /** Hash: refund external id → the fraction of this invoice it claimed (invariant 4). */
  refunds(invoiceRecordKey: string): string;
  /** Hash: one VAT submission's ledger entry (invariant 5). */
  vatLedger(entityJurisdiction: string, invoiceNumber: string): string;
  /** Set: every VAT ledger entry key (reconcile, status). */
  readonly vatLedgerIndex: string;
  /** Set: the VAT ledger entry keys of one record. */
  vatLedgerOfRecord(recordKey: string): string;
  /** Hash: connector id → the source its records were written with (source-change guard). */
  readonly sources: string;
  /** String: the last line of a file `taxsync ingest` committed. */
  ingestCheckpoint(fileId: string): string;
  /** List: the operators' audit log of dead-letter actions, newest first. */
  readonly audit: string;
  /** String: the lease of the one process applying dead-letter retention (its random token). */
  readonly dlqRetentionLease: string;
  /** One part of a `taxsync reconcile` run (its checkpoint, the engine's lists read so far, outcomes). */
  reconcile(runId: string, part: string): string;
}

export function createKeys(prefix: string): Keys {
  return {
    prefix,
    state: (recordKey) => `${prefix}:state:${recordKey}`,
    event: (recordKey) => `${prefix}:event:${recordKey}`,
    applied: (recordKey) => `${prefix}:applied:${recordKey}`,
    dirty: `${prefix}:dirty`,
    trace: (recordKey) => `${prefix}:trace:${recordKey}`,
    delivery: (connector, deliveryId) => `${prefix}:delivery:${connector}:${keyPart(deliveryId, 'id')}`,
    counters: `${prefix}:counters`,
    sources: `${prefix}:sources`,
    vatLedger: (ej, invoice) => `${prefix}:vat:${ej}:${keyPart(invoice, 'invoice_number')}`,
    vatLedgerIndex: `${prefix}:vat-index`,
    vatLedgerOfRecord: (recordKey) => `${prefix}:vat-of:${recordKey}`,
    refunds: (invoiceRecordKey) => `${prefix}:refunds:${invoiceRecordKey}`,
    ingestCheckpoint: (fileId) => `${prefix}:ingest:${fileId}`,
    audit: `${prefix}:audit`,
    dlqRetentionLease: `${prefix}:dlq-retention-lease`,
    reconcile: (runId, part) => `${prefix}:reconcile:${runId}:${part}`,
  };
}
