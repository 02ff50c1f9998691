import type { z } from 'zod';
import type { FieldErrors } from '../domain/errors.js';
import { TaxsyncError } from '../domain/errors.js';
import { issuesToFields, summariseFields } from '../domain/field-errors.js';
import { deepFreeze } from '../domain/freeze.js';

/**
 * The one validation of a request body. The mapping checks every body it builds with
 * `checkRequest`; the clients send such a body as it is and parse only a body nobody checked (the
 * CLI's, a test's, a VAT body read back from its ledger as bytes). A checked body is frozen to the
 * last nested value, so it cannot change between the check and the call: strict in what taxsync
 * sends holds on every path.
 *
 * PURE (zod and domain only): src/mapping imports it.
 */

// Which schema checked each body: a body checked as a customer is still parsed when sent as a transaction.
const checkedBy = new WeakMap<object, z.ZodType>();

declare const CHECKED: unique symbol;
/** A body `checkRequest` produced: frozen, and known to the clients as already checked. */
export type Checked<T> = T & { readonly [CHECKED]: true };

export type RequestCheck<T> = { ok: true; body: Checked<T> } | { ok: false; fields: FieldErrors };

/** Parses a body with its request schema; the parsed value is frozen and remembered as checked. */
export function checkRequest<S extends z.ZodType>(schema: S, body: unknown): RequestCheck<z.output<S>> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) return { ok: false, fields: issuesToFields(parsed.error.issues) };
  const value: unknown = parsed.data;
  if (value === null || typeof value !== 'object') return { ok: true, body: value as Checked<z.output<S>> };
  checkedBy.set(deepFreeze(value), schema);
  return { ok: true, body: value as Checked<z.output<S>> };
}

/** Whether `body` is a value `checkRequest` produced with this very schema. */
export function isChecked(schema: z.ZodType, body: unknown): boolean {
  return body !== null && typeof body === 'object' && checkedBy.get(body) === schema;
}

/**
 * What a client sends: a body already checked with this schema as it is, any other parsed here.
 * Nothing is sent when it fails (REQUEST_INVALID with the field errors).
 */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, endpoint: string): z.infer<S> {
  if (isChecked(schema, body)) return body as z.infer<S>;
  const result = checkRequest(schema, body);
  if (result.ok) return result.body;
  throw new TaxsyncError('REQUEST_INVALID', `${endpoint}: request body is invalid: ${summariseFields(result.fields)}`, { fields: result.fields, notSent: true });
}
