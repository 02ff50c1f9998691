import { CanonicalEvent, type CanonicalEventInput } from '../../domain/events.js';
import type { ParseResult } from '../types.js';
import { pathToString } from './parse.js';

/**
 * Checks mapped events against the canonical schema (a mapping that yields an invalid event is
 * reported as an invalid delivery naming the event field, never queued).
 */
export function toCanonicalEvents(
  inputs: readonly CanonicalEventInput[],
  context: { topic?: string; deliveryId?: string },
): { ok: true; events: CanonicalEvent[] } | { ok: false; result: ParseResult } {
  const events: CanonicalEvent[] = [];
  const fields: Record<string, string[]> = {};
  inputs.forEach((input, index) => {
    const parsed = CanonicalEvent.safeParse(input);
    if (parsed.success) events.push(parsed.data);
    else for (const issue of parsed.error.issues) (fields[`event[${index}].${pathToString(issue.path)}`] ??= []).push(issue.message);
  });
  if (Object.keys(fields).length === 0) return { ok: true, events };
  const summary = Object.entries(fields)
    .slice(0, 5)
    .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
    .join('; ');
  return { ok: false, result: { kind: 'invalid', ...context, message: `mapped event is not a valid canonical event: ${summary}`, fields } };
}
