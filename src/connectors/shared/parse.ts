import type { z } from 'zod';
import type { ParseResult } from '../types.js';

/** JSON.parse that reports instead of throwing. */
export function parseJsonBody(raw: Buffer): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (error) {
    return { ok: false, message: `body is not valid JSON: ${(error as Error).message}` };
  }
}

/** "line_items[2].price" from a zod path. */
export function pathToString(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? String(part) : `.${String(part)}`;
  return out === '' ? '(body)' : out;
}

/** A schema failure as an `invalid` result naming every field that failed. */
export function invalidFromZod(error: z.ZodError, context: { topic?: string; deliveryId?: string }): ParseResult {
  const fields: Record<string, string[]> = {};
  for (const issue of error.issues) (fields[pathToString(issue.path)] ??= []).push(issue.message);
  const summary = Object.entries(fields)
    .slice(0, 5)
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join('; ');
  return { kind: 'invalid', ...context, message: `payload does not match the schema: ${summary}`, fields };
}
