import type { RecordKind } from '../domain/record-key.js';

/** Queue names under the prefix (DESIGN.md, public interface). */
export const QUEUE_NAMES = {
  customers: 'customers',
  transactions: 'transactions',
  vatSubmissions: 'vat-submissions',
  deadLetter: 'dead-letter',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** The record queues workers consume; exemptions ride with customers, whose ids they need. */
export const RECORD_QUEUES = [QUEUE_NAMES.customers, QUEUE_NAMES.transactions, QUEUE_NAMES.vatSubmissions] as const;

export function queueForKind(kind: RecordKind): QueueName {
  switch (kind) {
    case 'customer':
    case 'exemption':
      return QUEUE_NAMES.customers;
    case 'transaction':
      return QUEUE_NAMES.transactions;
    case 'vat':
      return QUEUE_NAMES.vatSubmissions;
  }
}
