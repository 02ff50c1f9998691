import type { CanonicalEvent } from '../domain/events.js';
import type { RecordKey } from '../domain/record-key.js';

/** A `*.deleted` event needs no body: the processor calls DELETE (soft delete in the tax engine). */
export interface Deletion {
  resource: 'customers' | 'transactions' | 'exemptions';
  key: RecordKey;
  /**
   * `source_key`: `DELETE /v1/{resource}/{source}/{external_id}` from the key.
   * `engine_id`: exemptions have no key in the tax engine: `DELETE /v1/exemptions/{id}` with the
   * id the processor stored when it created the exemption (none stored: nothing to delete).
   */
  by: 'source_key' | 'engine_id';
}

/** The deletion an event asks for, or undefined when it is not a deletion. */
export function deletionFor(event: CanonicalEvent): Deletion | undefined {
  switch (event.type) {
    case 'customer.deleted':
      return { resource: 'customers', key: event.record, by: 'source_key' };
    case 'invoice.deleted':
    case 'refund.deleted':
      return { resource: 'transactions', key: event.record, by: 'source_key' };
    case 'exemption.deleted':
      return { resource: 'exemptions', key: event.record, by: 'engine_id' };
    default:
      return undefined;
  }
}
