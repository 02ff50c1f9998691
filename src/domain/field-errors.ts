import type { z } from 'zod';
import type { FieldErrors } from './errors.js';

/**
 * Field errors — `{ "lines[0].unit_price": ["must be a decimal string"] }`, the shape the VAT
 * service answers with — made from zod issues and told in one line. Every reader of a body
 * (connectors, mapping, API answers) names fields the same way.
 */

/** "items[2].unit_price" from a zod path; "(body)" for the whole value. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(body)' : out;
}

/** zod issues as field errors; `prefix` names where the value sits (`event[2].`). */
export function issuesToFields(issues: readonly z.core.$ZodIssue[], prefix = ''): FieldErrors {
  const fields: FieldErrors = {};
  const add = (path: readonly PropertyKey[], message: string) => (fields[`${prefix}${formatPath(path)}`] ??= []).push(message);
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      // A schema may explain itself in parentheses (lineAmount: "the line amount is unit_price × quantity").
      const why = /\(([^()]*)\)\s*$/.exec(issue.message)?.[1];
      for (const key of issue.keys) add([...issue.path, key], why === undefined ? `unknown field ${key}` : `unknown field ${key} (${why})`);
      continue;
    }
    add(issue.path, issue.message);
  }
  return fields;
}

/** "a: m1, m2; b: m3" — the first `limit` fields when given (a webhook answer stays short). */
export function summariseFields(fields: FieldErrors, limit?: number): string {
  const entries = Object.entries(fields);
  return (limit === undefined ? entries : entries.slice(0, limit)).map(([field, messages]) => `${field}: ${messages.join(', ')}`).join('; ');
}
