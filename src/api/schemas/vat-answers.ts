/**
 * What taxsync reads from each VAT service answer, and nothing more (docs/decisions.md, "Reading
 * answers"). An `id` is essential where taxsync needs it to go on (a registration, a filing, a
 * transaction type); every other field listed is read when readable and taken as absent otherwise.
 * Fields not listed pass through as received (`taxsync vat … --json` prints them) and are only
 * compared with the contract (vat.ts) by the drift detector.
 */
import { z } from 'zod';
import { AnswerDecimal, AnswerId, lenient, openEnum, readableItems, reads, type Read } from './common.js';
import {
  FILE_TYPES,
  FILING_STATUSES,
  REGISTRATION_STATUSES,
  REGISTRATION_TYPES,
  VALIDATION_STATUSES,
  type DraftReturnBoxContract,
  type FilingContract,
  type FilingFileContract,
  type RegistrationContract,
  type VatTransactionContract,
  type VatTransactionTypeContract,
} from './vat.js';

/**
 * The answer to a submission. Nothing in it is essential: the status says accepted (201) or
 * accepted with warnings (200), whatever the body holds, so a submission answered 2xx is never
 * taken for a failure (invariant 5). The id is kept in the ledger when readable; `committed` and
 * the two statuses, when readable, tell a submission the service stored but will not report as it
 * is (`committed: false`, a status `error`): still accepted, but surfaced (docs/vat.md).
 */
export const VatTransactionAnswer = z.preprocess(
  (body) => (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {}),
  reads({
    id: lenient(AnswerId),
    committed: lenient(z.boolean()),
    validity_status: lenient(openEnum(VALIDATION_STATUSES)),
    compliance_status: lenient(openEnum(VALIDATION_STATUSES)),
  }),
);
export type VatTransaction = Read<z.infer<typeof VatTransactionAnswer>, Partial<VatTransactionContract>>;

/** A transaction type: id and name, both needed to map a type name to its id; others are left out. */
export const VatTransactionTypeAnswer = reads({ id: AnswerId, name: z.string().trim().min(1) });
export type VatTransactionType = Read<z.infer<typeof VatTransactionTypeAnswer>, VatTransactionTypeContract>;

/**
 * A paging link as the service writes it: absolute, relative to the page, or http:// for its own
 * https host (behind a proxy that ends TLS). The client resolves it against the page's URL and
 * follows it only to the same service (src/api/http.ts).
 */
export const PageLink = z.string().trim().min(1);

/**
 * The types list as a bare array, `{results: [...]}` (a page, its `next` followed) or
 * `{data: [...]}`, normalised to the types and the link to the next page.
 */
export const VatTransactionTypeListAnswer = z.union([
  readableItems(VatTransactionTypeAnswer).transform((types) => ({ types, next: null })),
  reads({ results: readableItems(VatTransactionTypeAnswer), next: lenient(PageLink.nullable()) }).transform((body) => ({ types: body.results, next: body.next ?? null })),
  z.object({ data: readableItems(VatTransactionTypeAnswer) }).transform((body) => ({ types: body.data, next: null })),
]);

/**
 * A registration: its id; what a configured registration is matched by (jurisdiction ISO, type,
 * entity, status, entity jurisdiction); what `taxsync vat registrations list` shows in a row.
 */
export const RegistrationAnswer = reads({
  id: AnswerId,
  entity_jurisdiction: lenient(z.string()),
  taxable_jurisdiction_detail: lenient(reads({ iso: lenient(z.string()) })),
  entity_detail: lenient(reads({ id: lenient(z.string()) })),
  registration_type: lenient(openEnum(REGISTRATION_TYPES)),
  status: lenient(openEnum(REGISTRATION_STATUSES)),
  number: lenient(z.string().nullable()),
  date_of_registration: lenient(z.string().nullable()),
  date_registration_closed: lenient(z.string().nullable()),
});
export type Registration = Read<z.infer<typeof RegistrationAnswer>, RegistrationContract>;

/**
 * A page of registrations; a registration without a readable id is left out; no link ends the
 * paging. The client answers `next` and `previous` resolved to absolute URLs.
 */
export const RegistrationPageAnswer = reads({
  count: lenient(z.number()),
  next: lenient(PageLink.nullable()),
  previous: lenient(PageLink.nullable()),
  results: readableItems(RegistrationAnswer),
});
export type RegistrationPage = Omit<z.infer<typeof RegistrationPageAnswer>, 'results'> & { results: Registration[] };

/** A filing: its id; what `vat reconcile` compares (period, currency, entity jurisdiction). */
export const FilingAnswer = reads({
  id: AnswerId,
  status: lenient(openEnum(FILING_STATUSES)),
  currency: lenient(z.string()),
  entity_jurisdiction: lenient(z.string()),
  reporting_period_start: lenient(z.string()),
  reporting_period_end: lenient(z.string()),
  total_vat_due: lenient(AnswerDecimal),
  total_net: lenient(AnswerDecimal),
});
export type Filing = Read<z.infer<typeof FilingAnswer>, FilingContract>;

/** A filing's file, as `taxsync vat filings files` lists it. */
export const FilingFileAnswer = reads({
  id: AnswerId,
  file_type: lenient(openEnum(FILE_TYPES)),
  filename: lenient(z.string()),
  download_url: lenient(z.string()),
});
export type FilingFile = Read<z.infer<typeof FilingFileAnswer>, FilingFileContract>;

export const FilingFileListAnswer = reads({ results: readableItems(FilingFileAnswer) });

/** A draft return box: its number names it (a box without one is left out); the value is summed by `vat reconcile`. */
export const DraftReturnBoxAnswer = reads({
  box_number: z.string(),
  value: lenient(AnswerDecimal),
  currency: lenient(z.string()),
  description: lenient(z.string()),
});
export type DraftReturnBox = Read<z.infer<typeof DraftReturnBoxAnswer>, DraftReturnBoxContract>;

export const DraftReturnBoxesAnswer = reads({
  boxes: readableItems(DraftReturnBoxAnswer),
  total_vat_due: lenient(AnswerDecimal),
  reporting_period: lenient(z.string()),
});
export type DraftReturnBoxes = Omit<z.infer<typeof DraftReturnBoxesAnswer>, 'boxes'> & { boxes: DraftReturnBox[] };
