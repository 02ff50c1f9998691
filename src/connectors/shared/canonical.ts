import { CanonicalEvent, type CanonicalEventInput } from '../../domain/events.js';
import type { ParseResult } from '../types.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';

/**
 * Checks mapped events against the canonical schema (a mapping that yields an invalid event is
 * reported as an invalid delivery naming the event field, never queued).
 */
export function toCanonicalEvents(
  inputs: readonly CanonicalEventInput[],
  context: { topic?: string; deliveryId?: string },
): { ok: true; events: CanonicalEvent[] } | { ok: false; result: ParseResult } {
  const events: CanonicalEvent[] = [];
  let fields: Record<string, string[]> = {};
  inputs.forEach((input, index) => {
    const parsed = CanonicalEvent.safeParse(input);
    if (parsed.success) events.push(parsed.data);
    else fields = { ...fields, ...issuesToFields(parsed.error.issues, `event[${index}].`) };
  });
  if (Object.keys(fields).length === 0) return { ok: true, events };
  return { ok: false, result: { kind: 'invalid', ...context, message: `mapped event is not a valid canonical event: ${summariseFields(fields, 5)}`, fields } };
}
