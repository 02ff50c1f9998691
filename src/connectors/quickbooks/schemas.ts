import { z } from 'zod';
import type { Decimal } from '../../domain/money.js';
import { ExactAmount, KeyText, PlatformId, isCalendarDateTime, list, readAmount, text, utcTimestamp } from '../shared/fields.js';

/**
 * What QuickBooks Online sends and answers, only the fields taxsync reads (facts and sources:
 * docs/research/accounting-payloads.md). Tolerant readers: objects are loose, and what Intuit may
 * leave out is optional (QBO omits empty fields rather than sending null).
 */

// ——— values ———

/**
 * An amount taxsync sends on (Amount, TotalAmt, TotalTax, TaxInclusiveAmt). QBO writes money as
 * JSON numbers (275, 12.75, 0.9090889): read as readAmount (shared/fields.ts) reads them, exact to
 * 15 significant digits (QBO amounts carry 2 decimals and unit prices up to 7, far inside that);
 * one that may not be exact is refused, not guessed.
 */
export const QboAmount = ExactAmount;

/**
 * UnitPrice and Qty: only checked against the line's Amount, which is what was charged (lines.ts).
 * A JSON number that may not be exact is read as absent, so the line is priced from its Amount
 * instead; anything else readAmount refuses is refused here too.
 */
const QboUnitNumber = z.union([z.number(), z.string()]).transform((value, ctx): Decimal | undefined => {
  const read = readAmount(value);
  if (read.ok) return read.amount;
  if (read.inexact) return undefined;
  ctx.addIssue({ code: 'custom', message: read.message, input: value });
  return z.NEVER;
});

const INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A QBO time as UTC ISO 8601 ("2026-11-18T17:02:11Z"), or undefined when it is not one. Entity
 * times have a colon in their offset (-08:00); classic webhooks have also been seen with -0700 and
 * with .000Z; CloudEvents times carry nanoseconds, cut to milliseconds here. A date or time that
 * does not exist (30 February, 24:00) is refused, not rolled over into the next day or month.
 */
export function quickBooksInstant(value: string): string | undefined {
  const m = INSTANT.exec(value.trim());
  if (m === null || !isCalendarDateTime(m[1]!)) return undefined;
  const zone = m[3]!.toUpperCase() === 'Z' ? 'Z' : `${m[3]!.slice(0, 3)}:${m[3]!.slice(-2)}`;
  const fraction = m[2] === undefined ? '' : `.${m[2].slice(0, 3).padEnd(3, '0')}`;
  const at = Date.parse(`${m[1]}${fraction}${zone}`);
  return Number.isNaN(at) ? undefined : utcTimestamp(at);
}

export const QboDateTime = z.string().transform((text, ctx) => {
  const iso = quickBooksInstant(text);
  if (iso !== undefined) return iso;
  ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date-time with a time zone', input: text });
  return z.NEVER;
});

const Ref = z.looseObject({ value: PlatformId, name: text });
export type QboRef = z.infer<typeof Ref>;

export const QboAddress = z.looseObject({
  Line1: text,
  Line2: text,
  Line3: text,
  Line4: text,
  Line5: text,
  City: text,
  CountrySubDivisionCode: text,
  PostalCode: text,
  /** Free text ("USA", "Australia", "AU"); left out for domestic addresses. */
  Country: text,
});
export type QboAddress = z.infer<typeof QboAddress>;

const MetaData = z.looseObject({ CreateTime: QboDateTime.nullish(), LastUpdatedTime: QboDateTime });
const Email = z.looseObject({ Address: text });

// ——— transaction lines ———

export const SalesItemLineDetail = z.looseObject({
  ItemRef: Ref.nullish(),
  /** NET in a TaxInclusive document (so is the line's Amount); TaxInclusiveAmt is the gross. */
  UnitPrice: QboUnitNumber.nullish(),
  Qty: QboUnitNumber.nullish(),
  TaxCodeRef: Ref.nullish(),
  TaxInclusiveAmt: QboAmount.nullish(),
  DiscountRate: QboAmount.nullish(),
  DiscountAmt: QboAmount.nullish(),
});
export type SalesItemLineDetail = z.infer<typeof SalesItemLineDetail>;

const DiscountLineDetail = z.looseObject({
  PercentBased: z.boolean().nullish(),
  DiscountPercent: QboAmount.nullish(),
});

const lineFields = {
  Id: PlatformId.nullish(),
  Description: text,
  Amount: QboAmount.nullish(),
  /** SalesItemLineDetail, SubTotalLineDetail, DiscountLineDetail, DescriptionOnly, GroupLineDetail, … */
  DetailType: z.string(),
  SalesItemLineDetail: SalesItemLineDetail.nullish(),
  DiscountLineDetail: DiscountLineDetail.nullish(),
};
const InnerLine = z.looseObject(lineFields);
export const QboLine = z.looseObject({
  ...lineFields,
  /** A bundle: its own Amount is the sum of the SalesItemLineDetail lines it holds. */
  GroupLineDetail: z.looseObject({ Line: z.array(InnerLine).nullish() }).nullish(),
});
export type QboLine = z.infer<typeof QboLine>;

/** TotalTax is all taxsync reads; TaxLine (the tax per rate) is not read, so it is kept unchecked. */
const TxnTaxDetail = z.looseObject({
  TxnTaxCodeRef: Ref.nullish(),
  TotalTax: QboAmount.nullish(),
});

const LinkedTxn = z.looseObject({ TxnId: PlatformId, TxnType: z.string() });

// ——— entities ———

/** Invoice, SalesReceipt, CreditMemo and RefundReceipt share these fields. */
export const QboSalesTransaction = z.looseObject({
  Id: PlatformId,
  /** Raised by one on every change (a void too): the record's version. */
  SyncToken: PlatformId.nullish(),
  MetaData,
  DocNumber: KeyText.nullish(),
  TxnDate: z.iso.date({ error: 'must be a date YYYY-MM-DD' }).nullish(),
  CurrencyRef: Ref.nullish(),
  /** Home-currency units per one unit of CurrencyRef. */
  ExchangeRate: QboAmount.nullish(),
  PrivateNote: text,
  LinkedTxn: z.array(LinkedTxn).nullish(),
  Line: z.array(QboLine).nullish(),
  TxnTaxDetail: TxnTaxDetail.nullish(),
  CustomerRef: Ref.nullish(),
  BillAddr: QboAddress.nullish(),
  ShipAddr: QboAddress.nullish(),
  BillEmail: Email.nullish(),
  /** Non-US companies only: TaxExcluded, TaxInclusive or NotApplicable (read as text: a new value is refused in map.ts, not here). */
  GlobalTaxCalculation: text,
  ApplyTaxAfterDiscount: z.boolean().nullish(),
  TotalAmt: QboAmount.nullish(),
  Balance: QboAmount.nullish(),
});
export type QboSalesTransaction = z.infer<typeof QboSalesTransaction>;

export const QboInvoice = QboSalesTransaction;
export type QboInvoice = QboSalesTransaction;
export const QboSalesReceipt = QboSalesTransaction;
export type QboSalesReceipt = QboSalesTransaction;
export const QboCreditMemo = QboSalesTransaction;
export type QboCreditMemo = QboSalesTransaction;
export const QboRefundReceipt = QboSalesTransaction;
export type QboRefundReceipt = QboSalesTransaction;

/**
 * A Payment: read for the credit memos it applies to invoices (a credit memo names no invoice
 * itself): only its lines' LinkedTxn. Its amounts are not read, so they are kept unchecked.
 */
export const QboPayment = z.looseObject({
  Id: PlatformId,
  SyncToken: PlatformId.nullish(),
  MetaData: MetaData.nullish(),
  Line: z.array(z.looseObject({ LinkedTxn: z.array(LinkedTxn).nullish() })).nullish(),
});
export type QboPayment = z.infer<typeof QboPayment>;

export const QboCustomer = z.looseObject({
  Id: PlatformId,
  SyncToken: PlatformId.nullish(),
  MetaData,
  DisplayName: text,
  CompanyName: text,
  GivenName: text,
  FamilyName: text,
  PrimaryEmailAddr: Email.nullish(),
  BillAddr: QboAddress.nullish(),
  ShipAddr: QboAddress.nullish(),
  /** false: exempt from sales tax. */
  Taxable: z.boolean().nullish(),
  TaxExemptionReasonId: z.union([z.string(), z.number()]).nullish(),
  ResaleNum: text,
  PrimaryTaxIdentifier: text,
  Active: z.boolean().nullish(),
});
export type QboCustomer = z.infer<typeof QboCustomer>;

/** What `?operation=delete` answers, and all that is left of a deleted entity. */
export const QboDeleted = z.looseObject({ Id: PlatformId, status: z.string().regex(/^deleted$/i, { error: 'must be "Deleted"' }) });
export type QboDeleted = z.infer<typeof QboDeleted>;

// ——— answers ———

/** The entities taxsync reads, as QBO names them in answers, webhooks and URLs (lower-cased). */
export const QBO_ENTITIES = ['Invoice', 'SalesReceipt', 'CreditMemo', 'RefundReceipt', 'Customer', 'Payment'] as const;
export type QboEntityName = (typeof QBO_ENTITIES)[number];

const paging = { startPosition: z.int().nullish(), maxResults: z.int().nullish(), totalCount: z.int().nullish() };
// QBO leaves an entity's key out of a query that matched nothing (`{"QueryResponse": {}}`): `list` reads it as [].

/*
 * A read by id answers `{"Invoice": {...}, "time": "…"}`; a query answers
 * `{"QueryResponse": {"Invoice": [...], "startPosition": 1, "maxResults": N}, "time": "…"}`, where
 * maxResults is the number returned: a page shorter than the one asked for is the last.
 */
export const QboInvoiceAnswer = z.looseObject({ Invoice: QboInvoice, time: text });
export const QboInvoiceQuery = z.looseObject({ QueryResponse: z.looseObject({ Invoice: list(QboInvoice), ...paging }), time: text });
export const QboSalesReceiptAnswer = z.looseObject({ SalesReceipt: QboSalesReceipt, time: text });
export const QboSalesReceiptQuery = z.looseObject({ QueryResponse: z.looseObject({ SalesReceipt: list(QboSalesReceipt), ...paging }), time: text });
export const QboCreditMemoAnswer = z.looseObject({ CreditMemo: QboCreditMemo, time: text });
export const QboCreditMemoQuery = z.looseObject({ QueryResponse: z.looseObject({ CreditMemo: list(QboCreditMemo), ...paging }), time: text });
export const QboRefundReceiptAnswer = z.looseObject({ RefundReceipt: QboRefundReceipt, time: text });
export const QboRefundReceiptQuery = z.looseObject({ QueryResponse: z.looseObject({ RefundReceipt: list(QboRefundReceipt), ...paging }), time: text });
export const QboCustomerAnswer = z.looseObject({ Customer: QboCustomer, time: text });
export const QboCustomerQuery = z.looseObject({ QueryResponse: z.looseObject({ Customer: list(QboCustomer), ...paging }), time: text });
export const QboPaymentAnswer = z.looseObject({ Payment: QboPayment, time: text });
export const QboPaymentQuery = z.looseObject({ QueryResponse: z.looseObject({ Payment: list(QboPayment), ...paging }), time: text });

/**
 * The deleted entity an answer holds (`{"Invoice": {"domain": "QBO", "status": "Deleted", "Id":
 * "266"}}`), or undefined when it holds none: the answer to `?operation=delete`, and the form a
 * deleted record takes in a change-data-capture answer.
 */
export function deletedEntityOf(body: unknown): { entity: QboEntityName; deleted: QboDeleted } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const entity of QBO_ENTITIES) {
    const parsed = QboDeleted.safeParse((body as Record<string, unknown>)[entity]);
    if (parsed.success) return { entity, deleted: parsed.data };
  }
  return undefined;
}

// ——— webhooks ———

/** The classic format: `{eventNotifications: [{realmId, dataChangeEvent: {entities: [...]}}]}`. */
export const QboClassicNotification = z.looseObject({
  eventNotifications: z.array(
    z.looseObject({
      realmId: PlatformId,
      dataChangeEvent: z.looseObject({
        entities: z.array(
          z.looseObject({
            name: z.string().min(1),
            id: PlatformId,
            /** Create, Update, Delete, Merge, Void (and Emailed in third-party enums): read as text. */
            operation: z.string().min(1),
            lastUpdated: z.string().nullish(),
            /** Merge: the record merged away into `id`. */
            deletedId: PlatformId.nullish(),
          }),
        ),
      }),
    }),
  ),
});
export type QboClassicNotification = z.infer<typeof QboClassicNotification>;

/**
 * One CloudEvent (the format mandatory since 2026). Only `qbo.<entity>.created|updated.v1` are
 * confirmed; the words for delete, void and merge, the casing of two-word entities and a
 * counterpart of `deletedId` were not found, so `type` is read as text and `data` loosely.
 */
export const QboCloudEvent = z.looseObject({
  specversion: z.string().nullish(),
  id: z.string().min(1),
  source: text,
  type: z.string().min(1),
  time: z.string().nullish(),
  intuitentityid: PlatformId,
  intuitaccountid: PlatformId,
  datacontenttype: text,
  data: z.looseObject({ deletedId: PlatformId.nullish(), deletedid: PlatformId.nullish() }).nullish(),
  deletedid: PlatformId.nullish(),
});
export type QboCloudEvent = z.infer<typeof QboCloudEvent>;

/** A CloudEvents delivery: a JSON array of events. */
export const QboCloudEventBatch = z.array(QboCloudEvent);
