import type { CustomerRequest, TransactionRequest } from '../api/schemas/tax-engine.js';
import type { CanonicalEvent, InvoiceData } from '../domain/events.js';
import { Money, formatDecimal, isoExponent, roundMoney, type Decimal } from '../domain/money.js';
import type { RecordKey } from '../domain/record-key.js';
import { mapCustomer, mapInvoice, mapRefund, type MappingSettings, type OriginalTransaction } from '../mapping/index.js';
import type { EngineCustomer, EngineTransaction } from './facts.js';

/**
 * PURE: one record as taxsync holds it against the same record in the tax engine's lists.
 * taxsync's side is re-mapped from its latest state with the same mappers the processors use, so
 * "what the engine should hold" is the body taxsync would send now; the engine's side is what its
 * list answered (facts.ts). Amounts are compared to the currency's minor unit ("to the cent"),
 * quantities and refund shares exactly.
 */

export const FINDING_KINDS = ['missing', 'extra', 'differing'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface FieldDifference {
  field: string;
  taxsync: string | null;
  engine: string | null;
}

export interface Finding {
  kind: FindingKind;
  record: RecordKey;
  /** The engine's id, when it holds the record. */
  engine_id?: string;
  /** One line for a person. */
  reason: string;
  differences?: FieldDifference[];
}

export type Outcome =
  | { outcome: 'matched' }
  /** The newest event is not applied yet: its job will send it; compared on a later run. */
  | { outcome: 'pending' }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'finding'; finding: Finding };

/** One record of taxsync's latest-state store. */
export interface HeldRecord {
  key: RecordKey;
  event: CanonicalEvent;
  /** The newest event is not applied yet (seq > applied seq). */
  pending: boolean;
}

export interface TransactionContext {
  settings: MappingSettings;
  /** The engine's record of the same key, when its list holds one. */
  engine: EngineTransaction | undefined;
  /** For a linked refund: its invoice in the engine, and taxsync's canonical invoice when it holds one. */
  original?: { engine: EngineTransaction | undefined; invoice: InvoiceData | undefined };
  /** Σ of the shares the other refunds of the same invoice claimed (the refund ledger). */
  alreadyRefunded?: Decimal;
}

type Expected =
  | { present: false; why: string }
  | { present: true; type: 'invoice' | 'refund'; status: string; body?: TransactionRequest; linkedTo?: string; unlinked?: boolean }
  | { skip: string };

function expectTransaction(held: HeldRecord, ctx: TransactionContext): Expected {
  const { event, key } = held;
  const mapping = { key, settings: ctx.settings };
  switch (event.type) {
    case 'invoice.upserted': {
      const mapped = mapInvoice(event.data, mapping);
      if (mapped.kind === 'send') return { present: true, type: 'invoice', status: event.data.status, body: mapped.body };
      if (mapped.kind === 'ignore') return { skip: mapped.reason };
      return { present: true, type: 'invoice', status: event.data.status };
    }
    case 'invoice.cancelled':
      // The cancellation's data is laid over the invoice taxsync held before (gone once applied):
      // the state it sets is what can be checked.
      return { present: true, type: 'invoice', status: 'cancelled' };
    case 'refund.created': {
      const invoiceId = event.data.invoice_external_id;
      if (invoiceId === undefined) {
        const mapped = mapRefund(event.data, { ...mapping, alreadyRefunded: new Money(0) });
        return { present: true, type: 'refund', status: 'active', unlinked: true, ...(mapped.kind === 'send' ? { body: mapped.body } : {}) };
      }
      const engineInvoice = ctx.original?.engine;
      const original: OriginalTransaction | undefined = engineInvoice
        ? {
            id: engineInvoice.id,
            ...(ctx.original?.invoice ? { invoice: ctx.original.invoice } : {}),
            ...(engineInvoice.total_tax === undefined ? {} : { total_tax: engineInvoice.total_tax }),
          }
        : undefined;
      const mapped = original ? mapRefund(event.data, { ...mapping, original, alreadyRefunded: ctx.alreadyRefunded ?? new Money(0) }) : undefined;
      return { present: true, type: 'refund', status: 'active', linkedTo: invoiceId, ...(mapped?.kind === 'send' ? { body: mapped.body } : {}) };
    }
    case 'refund.cancelled':
      return { present: true, type: 'refund', status: 'cancelled', ...(event.data.invoice_external_id ? { linkedTo: event.data.invoice_external_id } : {}) };
    case 'invoice.deleted':
    case 'refund.deleted':
      return { present: false, why: `taxsync's latest event is ${event.type}` };
    default:
      return { skip: `${event.type} is not a transaction event` };
  }
}

const name = (key: RecordKey) => `${key.kind} ${key.source}/${key.external_id}`;
const present = (value: string | undefined): string | null => (value === undefined ? null : value);

/** Amounts by value, rounded to the currency's minor unit; absent reads as zero where the contract defaults it. */
function sameAmount(a: string | undefined, b: string | undefined, decimals: number): boolean {
  const x = roundMoney(new Money(a ?? '0'), decimals);
  const y = roundMoney(new Money(b ?? '0'), decimals);
  return x.equals(y);
}
const sameExact = (a: string | undefined, b: string | undefined) => (a === undefined || b === undefined ? a === b : new Money(a).equals(new Money(b)));
const shown = (value: string | undefined, decimals?: number) =>
  value === undefined ? null : decimals === undefined ? formatDecimal(new Money(value)) : roundMoney(new Money(value), decimals).toFixed(decimals);

function compareBody(body: TransactionRequest, engine: EngineTransaction, out: FieldDifference[]): void {
  const decimals = isoExponent(body.currency_details?.currency ?? engine.currency ?? 'USD');
  const amount = (field: string, ours: string | undefined, theirs: string | undefined) => {
    if (!sameAmount(ours, theirs, decimals)) out.push({ field, taxsync: shown(ours ?? '0', decimals), engine: shown(theirs ?? '0', decimals) });
  };
  const items = body.items ?? [];
  if (engine.items === undefined) {
    out.push({ field: 'items', taxsync: `${items.length} item(s)`, engine: null });
  } else if (engine.items.length !== items.length) {
    out.push({ field: 'items', taxsync: `${items.length} item(s)`, engine: `${engine.items.length} item(s)` });
  } else {
    items.forEach((item, i) => {
      const theirs = engine.items![i]!;
      amount(`items[${i}].unit_price`, item.unit_price, theirs.unit_price);
      if (!sameExact(item.quantity ?? '1', theirs.quantity ?? '1')) out.push({ field: `items[${i}].quantity`, taxsync: shown(item.quantity ?? '1'), engine: shown(theirs.quantity) });
      amount(`items[${i}].discount`, item.discount, theirs.discount);
    });
  }
  amount('transaction_level_discount', body.transaction_level_discount, engine.transaction_level_discount);
  amount('shipping_fee.amount', body.shipping_fee?.amount, engine.shipping_fee);
  const pct = body.refund_info?.refund_linked_percentage;
  if (pct !== undefined && !sameExact(pct, engine.refund_linked_percentage)) {
    out.push({ field: 'refund_info.refund_linked_percentage', taxsync: shown(pct), engine: shown(engine.refund_linked_percentage) });
  }
}

/** A transaction record of taxsync's against the engine's list. */
export function compareTransaction(held: HeldRecord, ctx: TransactionContext): Outcome {
  if (held.pending) return { outcome: 'pending' };
  const expected = expectTransaction(held, ctx);
  if ('skip' in expected) return { outcome: 'skipped', reason: expected.skip };
  const engine = ctx.engine;
  const record = held.key;
  if (!expected.present) {
    if (engine === undefined) return { outcome: 'matched' };
    return { outcome: 'finding', finding: { kind: 'extra', record, engine_id: engine.id, reason: `${name(record)} is in the tax engine, but ${expected.why}` } };
  }
  if (engine === undefined) {
    return { outcome: 'finding', finding: { kind: 'missing', record, reason: `${name(record)} (${held.event.type}) is not in the tax engine's transaction list` } };
  }
  const differences: FieldDifference[] = [];
  if (engine.transaction_type !== expected.type) differences.push({ field: 'transaction_type', taxsync: expected.type, engine: present(engine.transaction_type) });
  if (engine.transaction_status !== expected.status) differences.push({ field: 'transaction_status', taxsync: expected.status, engine: present(engine.transaction_status) });
  const currency = expected.body?.currency_details?.currency;
  if (currency !== undefined && engine.currency !== currency) differences.push({ field: 'currency_details.currency', taxsync: currency, engine: present(engine.currency) });
  if (expected.linkedTo !== undefined) {
    const original = ctx.original?.engine;
    const wanted = original?.id ?? null;
    if (engine.created_from !== original?.id || original === undefined) {
      differences.push({
        field: 'created_from',
        taxsync: wanted ?? `invoice ${expected.linkedTo} (not in the tax engine)`,
        engine: present(engine.created_from),
      });
    }
    if (engine.is_refund_linked !== true) differences.push({ field: 'refund_info.is_refund_linked', taxsync: 'true', engine: engine.is_refund_linked === undefined ? null : String(engine.is_refund_linked) });
  }
  if (expected.unlinked === true && engine.is_refund_linked === true) {
    differences.push({ field: 'refund_info.is_refund_linked', taxsync: 'false', engine: 'true' });
  }
  if (expected.body !== undefined) compareBody(expected.body, engine, differences);
  if (differences.length === 0) return { outcome: 'matched' };
  return {
    outcome: 'finding',
    finding: {
      kind: 'differing',
      record,
      engine_id: engine.id,
      reason: `${name(record)} differs in ${differences.map((d) => d.field).join(', ')}`,
      differences,
    },
  };
}

/** A customer record of taxsync's against the engine's list: existence and customer_type (the name an invoice's inline customer may rewrite). */
export function compareCustomer(held: HeldRecord, ctx: { settings: MappingSettings; engine: EngineCustomer | undefined }): Outcome {
  if (held.pending) return { outcome: 'pending' };
  const { event, key: record } = held;
  const engine = ctx.engine;
  if (event.type === 'customer.deleted') {
    if (engine === undefined) return { outcome: 'matched' };
    return { outcome: 'finding', finding: { kind: 'extra', record, engine_id: engine.id, reason: `${name(record)} is in the tax engine, but taxsync's latest event is customer.deleted` } };
  }
  if (event.type !== 'customer.upserted') return { outcome: 'skipped', reason: `${event.type} is not a customer event` };
  const mapped = mapCustomer(event.data, { key: record, settings: ctx.settings });
  const body: CustomerRequest | undefined = mapped.kind === 'send' ? mapped.body : undefined;
  if (engine === undefined) {
    return { outcome: 'finding', finding: { kind: 'missing', record, reason: `${name(record)} is not in the tax engine's customer list` } };
  }
  if (body?.customer_type !== undefined && engine.customer_type !== body.customer_type) {
    const differences = [{ field: 'customer_type', taxsync: body.customer_type, engine: present(engine.customer_type) }];
    return { outcome: 'finding', finding: { kind: 'differing', record, engine_id: engine.id, reason: `${name(record)} differs in customer_type`, differences } };
  }
  return { outcome: 'matched' };
}

/** An engine record taxsync holds no state for, in a source it writes. */
export function extraRecord(kind: 'transaction' | 'customer', engine: { id: string; source: string; external_id: string }): Finding {
  const record: RecordKey = { kind, source: engine.source, external_id: engine.external_id };
  return { kind: 'extra', record, engine_id: engine.id, reason: `${name(record)} is in the tax engine, but taxsync holds no record of it` };
}

/** Whether an ISO time is at or after `since` (an unreadable or absent time counts as inside). */
export function atOrAfter(time: string | undefined, since: Date | undefined): boolean {
  if (since === undefined || time === undefined) return true;
  const ms = Date.parse(time);
  return Number.isNaN(ms) || ms >= since.getTime();
}
