import { CanonicalEvent } from '../../domain/events.js';
import { REFUND_ID_PREFIX } from '../../domain/record-key.js';
import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import type { ErpBody } from './schemas.js';

/**
 * ERP deliveries → canonical events. Pure. The ERP already speaks the canonical format; this
 * checks each event and pins the two envelope fields the ERP must not choose freely:
 * - `record.source` must be the ERP connector's configured source (DESIGN.md, data model: a
 *   different source would create duplicate records in the tax engine). Absent, it is filled in.
 * - `connector` must be `erp` (or the id of the connection the events came to). Absent, it is
 *   filled in; anything else is refused, so an ERP event cannot pass itself off as coming from a
 *   platform connector or another connection.
 */

export const CONNECTOR_ID = 'erp';

export interface ErpMapContext {
  source: string;
  /** The connection the events came to (docs/connections.md): accepted as `connector` besides `erp`. */
  connection?: string;
}

export interface Rejected {
  index: number;
  message: string;
  fields?: Record<string, string[]>;
  raw: unknown;
}

export type ErpMapResult =
  | { kind: 'events'; topic: string; events: CanonicalEvent[]; rejected: Rejected[] }
  | { kind: 'invalid'; topic: string; message: string; fields?: Record<string, string[]> };

export function mapErpBody(body: ErpBody, ctx: ErpMapContext): ErpMapResult {
  const batch = Array.isArray(body);
  const items: unknown[] = batch ? body : [body];
  const topic = batch ? 'batch' : typeof body.type === 'string' ? body.type : 'event';
  if (items.length === 0) return { kind: 'invalid', topic, message: 'the batch holds no events' };

  const events: CanonicalEvent[] = [];
  const rejected: Rejected[] = [];
  items.forEach((raw, index) => {
    const result = readEvent(raw, ctx);
    if (result.ok) events.push(result.event);
    else rejected.push({ index, message: result.message, fields: result.fields, raw });
  });

  if (events.length > 0) return { kind: 'events', topic, events, rejected };
  if (!batch) {
    const only = rejected[0]!;
    return { kind: 'invalid', topic, message: only.message, fields: only.fields };
  }
  const fields: Record<string, string[]> = {};
  for (const r of rejected) for (const [field, messages] of Object.entries(r.fields ?? {})) fields[`[${r.index}].${field}`] = messages;
  const summary = rejected
    .slice(0, 5)
    .map((r) => `[${r.index}] ${r.message}`)
    .join('; ');
  return { kind: 'invalid', topic, message: `none of the ${rejected.length} events is valid: ${summary}`, fields };
}

type ReadResult = { ok: true; event: CanonicalEvent } | { ok: false; message: string; fields: Record<string, string[]> };

function readEvent(raw: unknown, ctx: ErpMapContext): ReadResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, message: 'an event must be a JSON object', fields: { '(event)': ['must be a JSON object'] } };
  }
  const fields: Record<string, string[]> = {};
  const candidate: Record<string, unknown> = { ...(raw as Record<string, unknown>) };

  const accepted = ctx.connection === undefined || ctx.connection === CONNECTOR_ID ? [CONNECTOR_ID] : [CONNECTOR_ID, ctx.connection];
  if (candidate.connector === undefined) candidate.connector = CONNECTOR_ID;
  else if (typeof candidate.connector !== 'string' || !accepted.includes(candidate.connector)) fields.connector = [`must be ${accepted.map((a) => `"${a}"`).join(' or ')} for events sent to this ERP webhook`];
  // The connection's own name is written as the platform's: the connection's namespace puts it back.
  else candidate.connector = CONNECTOR_ID;

  const record = candidate.record;
  if (typeof record === 'object' && record !== null && !Array.isArray(record)) {
    const key = { ...(record as Record<string, unknown>) };
    if (key.source === undefined) key.source = ctx.source;
    else if (key.source !== ctx.source) {
      fields['record.source'] = [
        `must be "${ctx.source}", the ERP connector's configured source (another source would duplicate the record in the tax engine)`,
      ];
    }
    candidate.record = key;
  }

  const parsed = CanonicalEvent.safeParse(candidate);
  if (!parsed.success) {
    for (const [field, messages] of Object.entries(issuesToFields(parsed.error.issues))) (fields[field] ??= []).push(...messages);
  } else {
    const clash = idClash(parsed.data);
    if (clash) (fields['record.external_id'] ??= []).push(clash);
  }
  if (!parsed.success || Object.keys(fields).length > 0) {
    return { ok: false, message: `event does not match the canonical schema: ${summariseFields(fields, 5)}`, fields };
  }
  return { ok: true, event: parsed.data };
}

/**
 * Invoices and refunds share the tax engine's (source, external_id) space and taxsync's record
 * key, and the ERP chooses its ids: a refund named like an invoice (credit note 1001 while
 * invoice 1001 exists) would become that invoice's newest version and overwrite it in the engine.
 * So the scheme of docs/events.md ("External ids") is enforced here: a refund's id starts with
 * `refund-`, an invoice's never does.
 */
function idClash(event: CanonicalEvent): string | undefined {
  const id = event.record.external_id;
  const refund = event.type.startsWith('refund.');
  if (refund && !id.startsWith(REFUND_ID_PREFIX)) {
    return `a refund's id must start with "${REFUND_ID_PREFIX}" (send "${REFUND_ID_PREFIX}${id}"): invoices and refunds share the tax engine's ids, so a refund named like an invoice would overwrite it`;
  }
  if (event.type.startsWith('invoice.') && id.startsWith(REFUND_ID_PREFIX)) {
    return `an invoice's id must not start with "${REFUND_ID_PREFIX}", which names refunds (invoices and refunds share the tax engine's ids)`;
  }
  return undefined;
}
