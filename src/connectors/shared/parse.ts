import type { z } from 'zod';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import type { ParseResult } from '../types.js';

/** JSON.parse that reports instead of throwing. */
export function parseJsonBody(raw: Buffer): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (error) {
    return { ok: false, message: `body is not valid JSON: ${(error as Error).message}` };
  }
}

/** A schema failure as an `invalid` result naming every field that failed. */
export function invalidFromZod(error: z.ZodError, context: { topic?: string; deliveryId?: string }): ParseResult {
  const fields = issuesToFields(error.issues);
  return { kind: 'invalid', ...context, message: `payload does not match the schema: ${summariseFields(fields, 5)}`, fields };
}
