import type { z } from 'zod';
import { errorAnswer, issuesToFields, type Answer } from '../answer.js';

/**
 * Request bodies of the tax engine are parsed with the zod schemas of src/api; a failure is a 400
 * `{error, details}` whose messages name the usual mistakes (camelCase, lineAmount, numeric sources).
 */
export function parseTaxBody<S extends z.ZodType>(schema: S, body: unknown, what: string): { ok: true; value: z.infer<S> } | { ok: false; answer: Answer } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, answer: errorAnswer(400, `invalid ${what}: the body must be a JSON object`, { '(body)': ['expected a JSON object'] }) };
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const details = issuesToFields(parsed.error.issues);
  for (const [path, value] of numericSources(body)) {
    details[path] = [`numeric source codes were replaced by lowercase names such as "api" (got ${value})`];
  }
  return { ok: false, answer: errorAnswer(400, `invalid ${what}`, details) };
}

function numericSources(body: object): [string, number][] {
  const found: [string, number][] = [];
  const visit = (node: unknown, path: string) => {
    if (node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      const here = path === '' ? key : `${path}.${key}`;
      if ((key === 'source' || key === 'customer_source') && typeof child === 'number') found.push([here, child]);
      else if (!Array.isArray(child)) visit(child, here);
    }
  };
  visit(body, '');
  return found;
}

export const notFound = (what: string) => errorAnswer(404, `${what} not found`);
