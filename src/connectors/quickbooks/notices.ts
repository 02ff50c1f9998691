import { issuesToFields, summariseFields } from '../../domain/field-errors.js';
import { QBO_ENTITIES, QboClassicNotification, QboCloudEventBatch, quickBooksInstant, type QboCloudEvent, type QboEntityName, type QboPayment } from './schemas.js';

/**
 * QuickBooks webhooks carry ids only: each entity changed, in which company (realm), how and when.
 * These functions turn either format into the notices a fetch job acts on (GET the entity, then map
 * it). PURE.
 */

export const QBO_OPERATIONS = ['Create', 'Update', 'Delete', 'Merge', 'Void'] as const;
export type QboOperation = (typeof QBO_OPERATIONS)[number];

export interface QuickBooksNotice {
  realmId: string;
  entity: QboEntityName;
  id: string;
  operation: QboOperation;
  /** When the entity changed, UTC ISO 8601 (the notice's lastUpdated or time). */
  occurredAt: string;
  /** A Merge: the record merged into `id`, gone since (classic `deletedId`). */
  mergedAwayId?: string;
  /** Stable per notice, for dedupe: the CloudEvent id, or realm/entity/id/operation/time of a classic one. */
  noticeId: string;
}

export interface SkippedNotice {
  realmId: string;
  entity: string;
  id: string;
  operation: string;
  reason: string;
}

export type QuickBooksNoticesResult =
  | { kind: 'notices'; format: 'classic' | 'cloudevents'; notices: QuickBooksNotice[]; skipped: SkippedNotice[] }
  | { kind: 'invalid'; message: string; fields: Record<string, string[]> };

export interface QuickBooksNoticesContext {
  /** Stands in for a notice that carries no time (CloudEvents makes `time` optional). */
  receivedAt: Date;
  /** The realms (companies) taxsync is connected to; a notice of another is skipped. @defaultValue every realm */
  realms?: readonly string[];
}

/** `creditmemo`, `CreditMemo`, `credit_memo` → CreditMemo: the CloudEvents casing of two-word entities was not found. */
const ENTITY_BY_KEY: ReadonlyMap<string, QboEntityName> = new Map(QBO_ENTITIES.map((e) => [e.toLowerCase(), e]));
const entityOf = (name: string): QboEntityName | undefined => ENTITY_BY_KEY.get(name.toLowerCase().replace(/[^a-z]/g, ''));

/** Classic words (Create…) and CloudEvents past tenses (created…; only created and updated are confirmed). */
const OPERATION_BY_WORD: ReadonlyMap<string, QboOperation | 'Emailed'> = new Map([
  ...QBO_OPERATIONS.flatMap((op) => [[op.toLowerCase(), op] as const, [`${op.toLowerCase().replace(/e$/, '')}ed`, op] as const]),
  ['emailed', 'Emailed'],
  ['email', 'Emailed'],
]);

/** Either webhook format (a body already verified and JSON-parsed) → notices, and what was skipped with its reason. */
export function quickBooksNotices(body: unknown, ctx: QuickBooksNoticesContext): QuickBooksNoticesResult {
  // A lone event object (CloudEvents' structured mode) is read as a batch of one.
  const lone = !Array.isArray(body) && typeof body === 'object' && body !== null && 'specversion' in body;
  if (Array.isArray(body) || lone) {
    const parsed = QboCloudEventBatch.safeParse(lone ? [body] : body);
    if (!parsed.success) return invalid(parsed.error.issues);
    return collect('cloudevents', parsed.data.map((event, i) => fromCloudEvent(event, i)), ctx);
  }
  const parsed = QboClassicNotification.safeParse(body);
  if (!parsed.success) return invalid(parsed.error.issues);
  const raw: RawNotice[] = [];
  parsed.data.eventNotifications.forEach((notification, n) =>
    notification.dataChangeEvent.entities.forEach((entity, e) => {
      const at = entity.lastUpdated ?? undefined;
      raw.push({
        realmId: notification.realmId,
        entity: entity.name,
        id: entity.id,
        operation: entity.operation,
        at,
        field: `eventNotifications[${n}].dataChangeEvent.entities[${e}].lastUpdated`,
        mergedAwayId: entity.deletedId ?? undefined,
        noticeId: (occurredAt) => `${notification.realmId}:${entity.name}:${entity.id}:${entity.operation}:${occurredAt}`,
      });
    }),
  );
  return collect('classic', raw, ctx);
}

interface RawNotice {
  realmId: string;
  entity: string;
  id: string;
  operation: string;
  at: string | undefined;
  /** Where `at` sits, for an error. */
  field: string;
  mergedAwayId: string | undefined;
  noticeId: (occurredAt: string) => string;
  /** Why the notice cannot be read at all (a CloudEvent type of another shape). */
  unreadable?: string;
}

/**
 * `qbo.<entity>.<operation>.v1`. Any version suffix (or none) is accepted: a later version would
 * still name the entity and its change, and the fetch reads the entity itself. `deletedId` has no
 * confirmed CloudEvents counterpart; `data.deletedId` or a `deletedid` attribute is read if present.
 */
function fromCloudEvent(event: QboCloudEvent, i: number): RawNotice {
  const match = /^qbo\.([A-Za-z_-]+)\.([A-Za-z]+)(?:\.v\d+)?$/.exec(event.type);
  return {
    realmId: event.intuitaccountid,
    entity: match?.[1] ?? event.type,
    id: event.intuitentityid,
    operation: match?.[2] ?? '',
    at: event.time ?? undefined,
    field: `[${i}].time`,
    mergedAwayId: event.data?.deletedId ?? event.data?.deletedid ?? event.deletedid ?? undefined,
    noticeId: () => event.id,
    ...(match === null ? { unreadable: `CloudEvent type ${event.type} is not qbo.<entity>.<operation>` } : {}),
  };
}

function collect(format: 'classic' | 'cloudevents', raw: readonly RawNotice[], ctx: QuickBooksNoticesContext): QuickBooksNoticesResult {
  const notices: QuickBooksNotice[] = [];
  const skipped: SkippedNotice[] = [];
  const fields: Record<string, string[]> = {};
  for (const r of raw) {
    const occurredAt = r.at === undefined ? quickBooksInstant(ctx.receivedAt.toISOString()) : quickBooksInstant(r.at);
    if (occurredAt === undefined) {
      fields[r.field] = ['must be an ISO 8601 date-time with a time zone'];
      continue;
    }
    const skip = (reason: string) => skipped.push({ realmId: r.realmId, entity: r.entity, id: r.id, operation: r.operation, reason });
    const entity = entityOf(r.entity);
    const operation = OPERATION_BY_WORD.get(r.operation.toLowerCase());
    if (r.unreadable !== undefined) skip(r.unreadable);
    else if (ctx.realms !== undefined && !ctx.realms.includes(r.realmId)) skip(`realm ${r.realmId} is not a company taxsync is connected to`);
    else if (entity === undefined) skip(`QuickBooks ${r.entity} records are not read by taxsync`);
    else if (operation === undefined) skip(`operation "${r.operation}" is not one taxsync knows (Create, Update, Delete, Merge, Void)`);
    else if (operation === 'Emailed') skip('an Emailed notice changes nothing taxsync reads');
    else {
      notices.push({
        realmId: r.realmId,
        entity,
        id: r.id,
        operation,
        occurredAt,
        ...(r.mergedAwayId === undefined ? {} : { mergedAwayId: r.mergedAwayId }),
        noticeId: r.noticeId(occurredAt),
      });
    }
  }
  if (Object.keys(fields).length > 0) return { kind: 'invalid', message: `notice time unreadable: ${summariseFields(fields, 5)}`, fields };
  return { kind: 'notices', format, notices, skipped };
}

function invalid(issues: Parameters<typeof issuesToFields>[0]): QuickBooksNoticesResult {
  const fields = issuesToFields(issues);
  return { kind: 'invalid', message: `not a QuickBooks webhook (classic or CloudEvents): ${summariseFields(fields, 5)}`, fields };
}

/**
 * The invoices each credit memo of a Payment is applied to. A credit memo names no invoice: QBO
 * applies it through a Payment (often of TotalAmt 0) whose lines link the CreditMemo and the
 * Invoice(s). The Payment does not pair credits with invoices, so every credit memo it applies is
 * given every invoice it names; one invoice links the refund, several leave it unlinked (map.ts).
 */
export function quickBooksCreditApplications(payment: QboPayment): { creditMemoId: string; invoiceIds: string[] }[] {
  const links = (payment.Line ?? []).flatMap((line) => line.LinkedTxn ?? []);
  const invoiceIds = [...new Set(links.filter((l) => l.TxnType === 'Invoice').map((l) => l.TxnId))];
  const memoIds = [...new Set(links.filter((l) => l.TxnType === 'CreditMemo').map((l) => l.TxnId))];
  return memoIds.map((creditMemoId) => ({ creditMemoId, invoiceIds }));
}
