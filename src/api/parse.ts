import type { z } from 'zod';
import { TaxsyncError, type FieldErrors } from '../domain/errors.js';
import type { HttpResponse } from './http.js';

/** "items[2].unit_price" from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(body)' : out;
}

/** zod issues in the `{field: [messages]}` shape the VAT service uses. */
export function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const fields: FieldErrors = {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      // A schema may explain itself in parentheses (lineAmount: "the line amount is unit_price × quantity").
      const why = /\(([^()]*)\)\s*$/.exec(issue.message)?.[1];
      for (const key of issue.keys) {
        const field = formatPath([...issue.path, key]);
        (fields[field] ??= []).push(why === undefined ? `unknown field ${key}` : `unknown field ${key} (${why})`);
      }
      continue;
    }
    const field = formatPath(issue.path);
    (fields[field] ??= []).push(issue.message);
  }
  return fields;
}

function summarise(fields: FieldErrors): string {
  return Object.entries(fields)
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join('; ');
}

/** Validates a response body; a missing or malformed required field is an error that names it. */
export function parseResponse<S extends z.ZodType>(schema: S, res: HttpResponse, endpoint: string): z.infer<S> {
  const result = schema.safeParse(res.body);
  if (result.success) return result.data;
  const fields = issuesToFields(result.error.issues);
  throw new TaxsyncError('API_BAD_RESPONSE', `${endpoint} answered ${res.status} with an unexpected body: ${summarise(fields)}`, {
    status: res.status,
    fields,
    http: res.exchange,
  });
}

/** Validates a request body before any call; nothing is sent when it fails. */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown, endpoint: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const fields = issuesToFields(result.error.issues);
  throw new TaxsyncError('REQUEST_INVALID', `${endpoint}: request body is invalid: ${summarise(fields)}`, { fields });
}
