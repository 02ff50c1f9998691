import type { z } from 'zod';
import type { FieldErrors } from './errors.js';

/**
 * Field errors — `{ "lines[0].unit_price": ["must be a decimal string"] }`, the shape the VAT
 * service answers with — made from zod issues and told in one line. Every reader of a body
 * (connectors, mapping, API answers) names fields the same way.
 */

/** "items[2].unit_price" from a zod path; `whole` ("(body)") for the whole value. */
export function formatPath(path: readonly PropertyKey[], whole = '(body)'): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? whole : out;
}

/** zod issues as field errors; `prefix` names where the value sits (`event[2].`), `whole` the value itself. */
export function issuesToFields(issues: readonly z.core.$ZodIssue[], prefix = '', whole?: string): FieldErrors {
  const fields: FieldErrors = {};
  const add = (path: readonly PropertyKey[], message: string) => (fields[`${prefix}${formatPath(path, whole)}`] ??= []).push(message);
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

/**
 * "a: m1, m2; b: m3" — the first `limit` fields when given (a webhook answer stays short); with
 * `sentence`, "a m1" (a configuration error: "TAXSYNC_PORT must be a port number").
 */
export function summariseFields(fields: FieldErrors, limit?: number, sentence = false): string {
  const entries = Object.entries(fields);
  return (limit === undefined ? entries : entries.slice(0, limit)).map(([field, messages]) => `${field}${sentence ? ' ' : ': '}${messages.join(', ')}`).join('; ');
}

/**
 * zod issues told in one line ("a: m1; b: m2"): what every reader of a file, an answer or a stored
 * value puts in its error. `whole` names the value itself ("(settings)"), `limit` keeps it short.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], options: { prefix?: string; whole?: string; limit?: number; sentence?: boolean } = {}): string {
  return summariseFields(issuesToFields(issues, options.prefix, options.whole), options.limit, options.sentence);
}
