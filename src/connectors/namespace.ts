import { namespaceEvent, type ConnectionKeys } from '../domain/connection.js';
import { CanonicalEvent } from '../domain/events.js';
import { issuesToFields, summariseFields } from '../domain/field-errors.js';
import type { Connector, ConnectorSettings, ParseResult, WebhookRequest } from './types.js';

/**
 * Events as their connection writes them (docs/connections.md): every event's `connector` is the
 * connection's id and its external ids carry the connection's prefix. An event that the prefix
 * makes invalid (an external id past 255 characters) is returned as a problem, at its position. A
 * default connection changes nothing.
 */
export function namespaceEvents(
  events: readonly CanonicalEvent[],
  connection: ConnectionKeys,
): { events: CanonicalEvent[]; problems: { position: number; message: string; fields: Record<string, string[]>; raw: CanonicalEvent }[] } {
  const out: CanonicalEvent[] = [];
  const problems: { position: number; message: string; fields: Record<string, string[]>; raw: CanonicalEvent }[] = [];
  events.forEach((event, position) => {
    const written = namespaceEvent(event, connection);
    if (written === event || connection.externalIdPrefix === '') {
      out.push(written);
      return;
    }
    const checked = CanonicalEvent.safeParse(written);
    if (checked.success) out.push(checked.data);
    else {
      const fields = issuesToFields(checked.error.issues);
      problems.push({ position, message: `with the connection's prefix "${connection.externalIdPrefix}": ${summariseFields(fields, 5)}`, fields, raw: event });
    }
  });
  return { events: out, problems };
}

/**
 * The one way a delivery is read for a connection (the webhook route, and a dead-letter replay of
 * a kept delivery): the platform's connector parses it, the connection's namespace is put on it.
 */
export function parseFor(connector: Connector, connection: ConnectionKeys, req: WebhookRequest, settings: ConnectorSettings): ParseResult {
  return namespaced(connector.parse(req, settings), connection);
}

/** A connector's reading of a delivery as its connection writes it; an event the prefix makes invalid is refused like a part failing its schema. */
export function namespaced(result: ParseResult, connection: ConnectionKeys): ParseResult {
  if (result.kind !== 'events') return result;
  // A platform's default connection (every webhook before connections existed): no copy at all.
  if (connection.externalIdPrefix === '' && result.events.every((e) => e.connector === connection.id)) return result;
  const { events, problems } = namespaceEvents(result.events, connection);
  if (problems.length === 0) return { ...result, events };
  // An ERP batch's events are its valid elements in order: the n-th event is the n-th element not rejected.
  const taken = new Set((result.rejected ?? []).map((r) => r.index));
  const elementOf = (position: number): number => {
    let element = -1;
    for (let seen = -1; seen < position; ) {
      element += 1;
      if (!taken.has(element)) seen += 1;
    }
    return element;
  };
  const rejected = [...(result.rejected ?? []), ...problems.map((p) => ({ index: elementOf(p.position), message: p.message, fields: p.fields, raw: p.raw }))];
  if (events.length === 0) return { kind: 'invalid', topic: result.topic, deliveryId: result.deliveryId, message: problems.map((p) => p.message).join('; ') };
  return { ...result, events, rejected };
}
