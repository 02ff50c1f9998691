import { z } from 'zod';
import { issuesToFields } from '../../domain/field-errors.js';
import { ExactAmount, KeyText, isCalendarDateTime, list, text, utcTimestamp } from '../shared/fields.js';

/**
 * The parts of Xero's webhook deliveries and Accounting API answers that taxsync reads. Tolerant
 * readers: objects are loose and what Xero may omit is optional. PURE (map.ts reads these). Facts
 * and sources: docs/research/accounting-payloads.md, "Xero".
 */

// ——— values ———

/** Year 0001 to 9999: the range an ISO 8601 date-time with four year digits can write. */
const MIN_MS = -62_135_596_800_000;
const MAX_MS = 253_402_300_799_999;

const MS_DATE = /^\/Date\((-?\d{1,16})([+-])(\d{2})(\d{2})\)\/$|^\/Date\((-?\d{1,16})\)\/$/;
const ISO_DATE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(Z|[+-](?:0\d|1[0-4]):[0-5]\d)?$/;

/**
 * Xero's Microsoft-JSON date `/Date(1573755038314+0000)/` (the offset may be absent) as an ISO
 * date-time in UTC, or undefined when the text is not one. The number is milliseconds since the
 * epoch in UTC; the offset only names the zone it was written in and does not move the instant
 * (the .NET DataContractJsonSerializer format), so it is checked and otherwise ignored. Integer
 * arithmetic only: the milliseconds are read as a safe integer, never through a float.
 */
export function parseXeroDate(text: string): string | undefined {
  const m = MS_DATE.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1] ?? m[5]);
  if (!Number.isSafeInteger(ms) || ms < MIN_MS || ms > MAX_MS) return undefined;
  if (m[3] !== undefined && (Number(m[3]) > 14 || Number(m[4]) > 59)) return undefined;
  return utcTimestamp(ms);
}

/**
 * An ISO date-time; one without a zone designator is UTC, as Xero writes `eventDateUtc`
 * ("2025-12-02T00:44:09.923") and the `DateString` twins ("2019-10-24T00:00:00").
 */
export function parseUtcDateTime(text: string): string | undefined {
  const m = ISO_DATE.exec(text);
  // Date.parse rolls 30 February over into March and takes 24:00: the calendar is checked first.
  if (m === null || !isCalendarDateTime(text)) return undefined;
  const ms = Date.parse(`${m[1]}${m[2] ?? 'Z'}`);
  return Number.isNaN(ms) || ms < MIN_MS || ms > MAX_MS ? undefined : utcTimestamp(ms);
}

/** A Xero date field: the `/Date(ms)/` form, or (tolerated) an ISO date-time read as UTC when zone-less. */
export const XeroDate = z.string().transform((text, ctx) => {
  const iso = parseXeroDate(text) ?? parseUtcDateTime(text);
  if (iso !== undefined) return iso;
  ctx.addIssue({ code: 'custom', message: 'must be a Xero date such as /Date(1573755038314+0000)/', input: text });
  return z.NEVER;
});

/** A webhook's `eventDateUtc`: an ISO date-time, UTC when it has no zone designator. */
export const XeroUtcDateTime = z.string().transform((text, ctx) => {
  const iso = parseUtcDateTime(text);
  if (iso !== undefined) return iso;
  ctx.addIssue({ code: 'custom', message: 'must be a date-time such as 2025-12-02T00:44:09.923 (UTC)', input: text });
  return z.NEVER;
});

/**
 * An amount. Xero writes money, quantities and rates as JSON numbers (`19.95`, `0.625`): read as
 * readAmount (shared/fields.ts) reads them, exact to 15 significant digits (Xero's amounts have 2
 * decimals, unit amounts and quantities up to 4, rates 6); a decimal string as written.
 */
export const XeroAmount = ExactAmount;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Xero id (InvoiceID, ContactID, CreditNoteID…): a GUID, lowercased so one record has one key. */
export const XeroGuid = z
  .string()
  .trim()
  .regex(GUID, { error: 'must be a Xero id (a GUID such as 430fa14a-f945-44d3-9f97-5df5e28441b8)' })
  .transform((id) => id.toLowerCase());

export function isXeroGuid(text: string): boolean {
  return GUID.test(text);
}

const Currency = z.string().regex(/^[A-Z]{3}$/, { error: 'must be an ISO 4217 code such as NZD' });

// ——— webhooks ———

/**
 * One webhook event (xero-webhooks.yaml `WebhookEvent`). `eventType` and `eventCategory` are read
 * as strings, not enums: Xero added CREDITNOTE in 2025, and a value it adds next must not fail the
 * events beside it. xeroNotices (map.ts) skips what it does not know, with a reason.
 */
export const XeroWebhookEvent = z.looseObject({
  resourceUrl: text,
  resourceId: z.string().trim().min(1),
  eventDateUtc: XeroUtcDateTime,
  eventType: z.string().trim().min(1),
  eventCategory: z.string().trim().min(1),
  tenantId: z.string().trim().min(1),
  tenantType: text,
  /** Credit-note events only: the note's Type and Status when the event was raised. */
  data: z.looseObject({ Type: text, Status: text }).nullish(),
});
export type XeroWebhookEvent = z.infer<typeof XeroWebhookEvent>;

/**
 * A delivery: `{events, firstEventSequence, lastEventSequence, entropy}`. Events stay unknown here
 * and are read one by one, so one malformed event is skipped instead of failing the delivery.
 */
export const XeroWebhookPayload = z.looseObject({
  events: z.array(z.unknown()),
  firstEventSequence: z.int().nullish(),
  lastEventSequence: z.int().nullish(),
  entropy: text,
});
export type XeroWebhookPayload = z.infer<typeof XeroWebhookPayload>;

// ——— Accounting API entities ———

/** A contact's address: AddressType STREET or POBOX; Country is free text ("New Zealand"). */
export const XeroAddress = z.looseObject({
  AddressType: text,
  AddressLine1: text,
  AddressLine2: text,
  AddressLine3: text,
  AddressLine4: text,
  City: text,
  Region: text,
  PostalCode: text,
  Country: text,
});
export type XeroAddress = z.infer<typeof XeroAddress>;

/** An invoice's own address (US sales tax): InvoiceAddressType FROM or TO. */
const XeroInvoiceAddress = XeroAddress.extend({ InvoiceAddressType: text });
export type XeroInvoiceAddress = z.infer<typeof XeroInvoiceAddress>;

/** A contact, whole (GET /Contacts) or as the stub an invoice or credit note carries. */
export const XeroContact = z.looseObject({
  ContactID: XeroGuid,
  ContactStatus: text,
  Name: text,
  FirstName: text,
  LastName: text,
  EmailAddress: text,
  TaxNumber: text,
  AccountsReceivableTaxType: text,
  Addresses: list(XeroAddress),
  IsCustomer: z.boolean().nullish(),
  IsSupplier: z.boolean().nullish(),
  UpdatedDateUTC: XeroDate.nullish(),
});
export type XeroContact = z.infer<typeof XeroContact>;

export const XeroLineItem = z.looseObject({
  LineItemID: XeroGuid.nullish(),
  Description: text,
  Quantity: XeroAmount.nullish(),
  UnitAmount: XeroAmount.nullish(),
  ItemCode: text,
  Item: z.looseObject({ ItemID: XeroGuid.nullish(), Name: text, Code: text }).nullish(),
  TaxType: text,
  TaxAmount: XeroAmount.nullish(),
  LineAmount: XeroAmount.nullish(),
  /** A percentage (10 = 10%); ACCREC invoices only. */
  DiscountRate: XeroAmount.nullish(),
  /** For the whole line, not per unit. */
  DiscountAmount: XeroAmount.nullish(),
});
export type XeroLineItem = z.infer<typeof XeroLineItem>;

/** What invoices and credit notes share. */
const document = {
  Type: z.string(),
  Contact: XeroContact.nullish(),
  Date: XeroDate.nullish(),
  DateString: XeroDate.nullish(),
  Status: z.string(),
  LineAmountTypes: text,
  LineItems: list(XeroLineItem),
  SubTotal: XeroAmount.nullish(),
  TotalTax: XeroAmount.nullish(),
  Total: XeroAmount.nullish(),
  CurrencyCode: Currency,
  CurrencyRate: XeroAmount.nullish(),
  Reference: text,
  UpdatedDateUTC: XeroDate,
};

export const XeroInvoice = z.looseObject({
  ...document,
  InvoiceID: XeroGuid,
  InvoiceNumber: KeyText.nullish(),
  InvoiceAddresses: list(XeroInvoiceAddress),
});
export type XeroInvoice = z.infer<typeof XeroInvoice>;

/**
 * A credit note's allocation to an invoice; the Invoice is a stub: rely on its InvoiceID. Only
 * what map.ts reads is checked (its AllocationID, Amount and Date are not read: kept, unchecked).
 */
const XeroAllocation = z.looseObject({
  Invoice: z.looseObject({ InvoiceID: XeroGuid.nullish(), InvoiceNumber: text }).nullish(),
  IsDeleted: z.boolean().nullish(),
});
export type XeroAllocation = z.infer<typeof XeroAllocation>;

export const XeroCreditNote = z.looseObject({
  ...document,
  CreditNoteID: XeroGuid,
  CreditNoteNumber: KeyText.nullish(),
  Allocations: list(XeroAllocation),
});
export type XeroCreditNote = z.infer<typeof XeroCreditNote>;

// ——— list answers ———

export type XeroCollection = 'Invoices' | 'Contacts' | 'CreditNotes';

const Pagination = z.looseObject({ page: z.int(), pageSize: z.int(), pageCount: z.int(), itemCount: z.int() });

/**
 * The answers of GET /Invoices, /Contacts and /CreditNotes (a GET by id too: a one-element list).
 * Records stay unknown here: readXeroItems reads each, so one bad record does not lose its page.
 */
const answer = { Status: text, pagination: Pagination.nullish() };
export const XeroInvoicesAnswer = z.looseObject({ ...answer, Invoices: z.array(z.unknown()) });
export const XeroContactsAnswer = z.looseObject({ ...answer, Contacts: z.array(z.unknown()) });
export const XeroCreditNotesAnswer = z.looseObject({ ...answer, CreditNotes: z.array(z.unknown()) });

export type XeroItem<T> = { ok: true; path: string; value: T } | { ok: false; path: string; fields: Record<string, string[]> };

/**
 * Each record of a list answer read with `schema`; a failure names Xero's own path
 * (`Invoices[3].LineItems[0].UnitAmount`). `path` is the prefix map.ts puts on its own field names.
 */
export function readXeroItems<T>(collection: XeroCollection, items: readonly unknown[], schema: z.ZodType<T>): XeroItem<T>[] {
  return items.map((item, index) => {
    const path = `${collection}[${index}].`;
    const parsed = schema.safeParse(item);
    return parsed.success ? { ok: true, path, value: parsed.data } : { ok: false, path, fields: issuesToFields(parsed.error.issues, path) };
  });
}
