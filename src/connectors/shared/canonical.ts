import { CanonicalEvent, type CanonicalEventInput } from '../../domain/events.js';
import type { ParseResult } from '../types.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';

/** Each input checked against the canonical schema: the valid events, and every failing field named `<prefix(index)><path>`. */
function check(inputs: readonly CanonicalEventInput[], prefix: (index: number) => string): { events: CanonicalEvent[]; fields: Record<string, string[]> } {
  const events: CanonicalEvent[] = [];
  let fields: Record<string, string[]> = {};
  inputs.forEach((input, index) => {
    const parsed = CanonicalEvent.safeParse(input);
    if (parsed.success) events.push(parsed.data);
    else fields = { ...fields, ...issuesToFields(parsed.error.issues, prefix(index)) };
  });
  return { events, fields };
}

/**
 * Checks mapped events against the canonical schema (a mapping that yields an invalid event is
 * reported as an invalid delivery naming the event field, never queued).
 */
export function toCanonicalEvents(
  inputs: readonly CanonicalEventInput[],
  context: { topic?: string; deliveryId?: string },
): { ok: true; events: CanonicalEvent[] } | { ok: false; result: ParseResult } {
  const { events, fields } = check(inputs, (index) => `event[${index}].`);
  if (Object.keys(fields).length === 0) return { ok: true, events };
  return { ok: false, result: { kind: 'invalid', ...context, message: `mapped event is not a valid canonical event: ${summariseFields(fields, 5)}`, fields } };
}

/**
 * The same check for the map functions of the accounting connectors (Xero, QuickBooks), which
 * answer a record's events or an `invalid` of their own: the fields are named `event.<path>` (a
 * record maps to one event; `event[<i>].<path>` if it ever maps to several).
 */
export function canonicalOrInvalid(
  inputs: readonly CanonicalEventInput[],
): { kind: 'events'; events: CanonicalEvent[] } | { kind: 'invalid'; message: string; fields: Record<string, string[]> } {
  const { events, fields } = check(inputs, (index) => (inputs.length === 1 ? 'event.' : `event[${index}].`));
  if (Object.keys(fields).length === 0) return { kind: 'events', events };
  return { kind: 'invalid', message: `the mapped event does not match the canonical schema: ${summariseFields(fields, 5)}`, fields };
}
