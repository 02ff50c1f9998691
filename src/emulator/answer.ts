import type { z } from 'zod';
import type { FieldErrors } from './contract/primitives.js';

/**
 * What a route handler returns; the route wrapper (server.ts) sends it, or drops the connection
 * instead when a fault says so. Error bodies follow docs/decisions.md: the tax engine and VAT
 * submission answer `{error, details}`, registrations and filings `{detail}`.
 */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The record the request turned out to touch (a created id), for the request log. */
  record?: RecordRef;
}

/** The record a request touches, as shown in the request log. */
export interface RecordRef {
  kind: 'customer' | 'transaction' | 'exemption' | 'vat' | 'registration' | 'filing';
  /** `customer:api:c-1`, `vat:<entity_jurisdiction>:<invoice_number>`, `exemption:<id>`… */
  key: string;
  id?: string;
}

export const ok = (body: unknown): Answer => ({ status: 200, body });
export const created = (body: unknown): Answer => ({ status: 201, body });
export const noContent = (): Answer => ({ status: 204 });

/** `{error, details}`: tax engine and VAT submission errors. */
export function errorAnswer(status: number, error: string, details: FieldErrors = {}): Answer {
  return { status, body: { error, details } };
}

/** `{detail}` (plus `details` with field errors when there are some): registrations and filings. */
export function detailAnswer(status: number, detail: string, details?: FieldErrors): Answer {
  return { status, body: details === undefined || Object.keys(details).length === 0 ? { detail } : { detail, details } };
}

/** "items[2].unit_price" from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(body)' : out;
}

function snakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The message for a key the schema does not know, naming the usual mistakes. */
export function unknownFieldMessage(key: string): string {
  if (key === 'lineAmount') {
    return 'lineAmount was removed from the API and is not accepted: the line amount is calculated as unit_price times quantity';
  }
  if (/[a-z0-9][A-Z]/.test(key)) {
    return `camelCase field ${key} is not accepted: all field names are snake_case (did you mean ${snakeCase(key)}?)`;
  }
  return `unknown field ${key}`;
}

/** zod issues as `{field: [messages]}`, with clear messages for unknown and camelCase keys. */
export function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const fields: FieldErrors = {};
  const add = (field: string, message: string) => {
    const list = (fields[field] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(formatPath([...issue.path, key]), unknownFieldMessage(key));
    } else {
      add(formatPath(issue.path), issue.message);
    }
  }
  return fields;
}

export function mergeFields(...all: FieldErrors[]): FieldErrors {
  const out: FieldErrors = {};
  for (const fields of all) {
    for (const [field, messages] of Object.entries(fields)) {
      const list = (out[field] ??= []);
      for (const m of messages) if (!list.includes(m)) list.push(m);
    }
  }
  return out;
}

/** "items[0].unit_price: Required; limit: too big" for one-line `detail` messages. */
export function summariseFields(fields: FieldErrors): string {
  return Object.entries(fields)
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join('; ');
}

/** Parses a registration or filing body; a failure is a 400 `{detail, details}` naming every field. */
export function parseDetailBody<S extends z.ZodType>(schema: S, body: unknown): { ok: true; value: z.infer<S> } | { ok: false; answer: Answer } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, answer: detailAnswer(400, 'the body must be a JSON object') };
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const fields = issuesToFields(parsed.error.issues);
  return { ok: false, answer: detailAnswer(400, `invalid request: ${summariseFields(fields)}`, fields) };
}
