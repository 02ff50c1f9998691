import type { z } from 'zod';
import { checkRequest, type Checked } from '../api/request.js';
import type { TransactionRequest } from '../api/schemas/tax-engine.js';
import type { FieldErrors } from '../domain/errors.js';
import { issuesToFields, summariseFields } from '../domain/field-errors.js';
import type { Decimal } from '../domain/money.js';
import type { RecordKey, RecordKind } from '../domain/record-key.js';
import type { MappingSettings } from './settings.js';

/**
 * What a mapper decides. Mappers never throw on data and never do I/O: the processor acts on the
 * kind (DESIGN.md, "Errors and retries").
 * - `send`: the body, already checked against the request schema of src/api. `notes` are facts
 *   the mapper left out of the body (for the processor's log), never secrets.
 * - `ignore`: nothing to send, done (the reason is logged).
 * - `invalid`: dead letter at once with the field errors; no API call.
 * - `wait`: something this record needs is not in the tax engine yet; re-check with backoff.
 */
export type MapResult<B> =
  | { kind: 'send'; body: B; notes?: string[] }
  | { kind: 'ignore'; reason: string }
  | { kind: 'invalid'; message: string; fields: FieldErrors }
  | { kind: 'wait'; reason: string };

export type NotSent = Exclude<MapResult<never>, { kind: 'send' }>;

/**
 * A refund's result. `fraction` is the share of its original this body claims — exactly the value
 * sent as refund_info.refund_linked_percentage — or 0 for an unlinked refund. The processor records
 * it per refund so the next refund of the same invoice gets `alreadyRefunded`.
 */
export type RefundMapResult = { kind: 'send'; body: TransactionRequest; fraction: Decimal; notes?: string[] } | NotSent;

/** What every mapper receives besides its data. */
export interface MappingContext {
  /** The record being mapped: `source` and `external_id` in the body come from here, never from data. */
  key: RecordKey;
  settings: MappingSettings;
}

export const ignore = (reason: string): NotSent => ({ kind: 'ignore', reason });
export const wait = (reason: string): NotSent => ({ kind: 'wait', reason });

/** `invalid`, with a one-line message that names every field. */
export function invalid(what: string, fields: FieldErrors): NotSent {
  return { kind: 'invalid', message: `${what} cannot be sent: ${summariseFields(fields)}`, fields };
}

/** Collects field errors while a body is built. */
export class Problems {
  readonly fields: FieldErrors = {};
  add(field: string, message: string): void {
    (this.fields[field] ??= []).push(message);
  }
  get any(): boolean {
    return Object.keys(this.fields).length > 0;
  }
}

/** A mapper called with the wrong kind of record key is a processor bug; it is reported, not thrown. */
export function wrongKind(key: RecordKey, expected: RecordKind, what: string): NotSent | undefined {
  if (key.kind === expected) return undefined;
  return invalid(what, { 'record.kind': [`expected a ${expected} record, got ${key.kind}`] });
}

/** Field errors of canonical data (a merged cancellation), named as in the event: `data.lines[0].unit_price`. */
export function dataFields(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  return issuesToFields(issues, 'data.');
}

/**
 * Checks the built body with the API's request schema (src/api/request.ts), so a bad body never
 * reaches a call; a good one comes back frozen and is not parsed again by the client.
 */
export function checked<S extends z.ZodType>(
  schema: S,
  body: unknown,
  what: string,
): { ok: true; body: Checked<z.output<S>> } | { ok: false; result: NotSent } {
  const check = checkRequest(schema, body);
  if (check.ok) return check;
  return { ok: false, result: invalid(what, check.fields) };
}
