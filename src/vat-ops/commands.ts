import type {
  DraftReturnBoxes,
  Filing,
  FilingFile,
  Registration,
  RegistrationCreateRequest,
  RegistrationListQuery,
  RegistrationPatchRequest,
  VatTransactionType,
} from '../api/schemas/index.js';
import type { VatClient } from '../api/vat-client.js';
import type { VatLedger } from '../queue/vat-ledger.js';
import { parseLedgerKey, parseReportingPeriod, reconcile, type BoxLayout, type KeyedLedgerEntry, type ReconcileReport } from './reconcile.js';

/**
 * The logic of `taxsync vat …` (operator commands): thin wrappers over the VAT client and the
 * ledger, with the decisions the commands make (paging through all registrations, the close
 * confirmation, what reconcile compares). src/cli/commands/vat.ts only parses flags and prints.
 */

export function transactionTypes(vat: VatClient): Promise<VatTransactionType[]> {
  return vat.transactionTypes();
}

/** Every registration matching the filters, following `next` links through all pages. */
export async function listRegistrations(vat: VatClient, filters: RegistrationListQuery = {}): Promise<Registration[]> {
  const all: Registration[] = [];
  for await (const registration of vat.registrations.iterate(filters)) all.push(registration);
  return all;
}

export const showRegistration = (vat: VatClient, id: string): Promise<Registration> => vat.registrations.get(id);

export const createRegistration = (vat: VatClient, body: RegistrationCreateRequest): Promise<Registration> => vat.registrations.create(body);

/** PATCH with the given fields only; refuses an empty change (it would do nothing). */
export async function updateRegistration(vat: VatClient, id: string, fields: RegistrationPatchRequest): Promise<Registration> {
  const given = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as RegistrationPatchRequest;
  if (Object.keys(given).length === 0) throw new Error('nothing to update: give at least one field');
  return vat.registrations.patch(id, given);
}

export interface CloseOptions {
  /** YYYY-MM-DD; default today (UTC). */
  date?: string;
  /** --yes: no question asked. */
  yes: boolean;
  /** Whether a person can answer (stdin is a TTY). */
  interactive: boolean;
  /** Asks the question; true to go ahead. Called only when interactive and not --yes. */
  confirm: (question: string) => Promise<boolean>;
  now?: () => Date;
}

export type CloseResult = { closed: true; registration: Registration } | { closed: false; reason: string };

/**
 * Sets date_registration_closed, which triggers deregistration at the service: asks first on a
 * TTY unless --yes, and refuses without --yes when nobody can answer.
 */
export async function closeRegistration(vat: VatClient, id: string, options: CloseOptions): Promise<CloseResult> {
  const date = options.date ?? (options.now ?? (() => new Date()))().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`--date ${JSON.stringify(date)} is not YYYY-MM-DD`);
  if (!options.yes && !options.interactive) {
    throw new Error(`closing registration ${id} triggers deregistration at the VAT service: pass --yes to confirm (stdin is not a terminal)`);
  }
  if (!options.yes) {
    const current = await vat.registrations.get(id);
    const what = [current.taxable_jurisdiction_detail?.iso, current.registration_type, current.number ? `number ${current.number}` : undefined]
      .filter(Boolean)
      .join(' ');
    const ok = await options.confirm(
      `Close registration ${id} (${what}) as of ${date}? This triggers deregistration at the VAT service. [y/N] `,
    );
    if (!ok) return { closed: false, reason: 'not confirmed' };
  }
  return { closed: true, registration: await vat.registrations.patch(id, { date_registration_closed: date }) };
}

export const createFiling = (vat: VatClient, body: { registration_filing_type: string; reporting_period_start: string; reporting_period_end: string }): Promise<Filing> =>
  vat.filings.create(body);
export const showFiling = (vat: VatClient, id: string): Promise<Filing> => vat.filings.get(id);
export const filingFiles = (vat: VatClient, id: string): Promise<FilingFile[]> => vat.filings.files(id);
export const filingBoxes = (vat: VatClient, id: string): Promise<DraftReturnBoxes> => vat.filings.draftReturnBoxes(id);
export function approveFiling(vat: VatClient, id: string, options: { approvedBy?: string; notes?: string } = {}): Promise<Filing> {
  return vat.filings.approve(id, {
    ...(options.approvedBy === undefined ? {} : { approved_by: options.approvedBy }),
    ...(options.notes === undefined ? {} : { approval_notes: options.notes }),
  });
}

/** Every ledger entry with the entity jurisdiction and invoice number of its key. */
export async function ledgerEntries(ledger: Pick<VatLedger, 'entries'>): Promise<KeyedLedgerEntry[]> {
  const out: KeyedLedgerEntry[] = [];
  for await (const [key, entry] of ledger.entries()) {
    const parts = parseLedgerKey(key);
    if (parts) out.push({ ...parts, entry });
  }
  return out;
}

export interface ReconcileOptions {
  /** `YYYY-MM` or `YYYY-Qn`. */
  period: string;
  filingId?: string;
  /** Overrides the filing's entity jurisdiction (when the service does not name it). */
  entityJurisdiction?: string;
  layout?: BoxLayout;
}

/** Reads the ledger (and the filing's draft return) and compares them; see vat-reconcile.ts. */
export async function reconcileVat(deps: { ledger: Pick<VatLedger, 'entries'>; vat?: VatClient }, options: ReconcileOptions): Promise<ReconcileReport> {
  const period = parseReportingPeriod(options.period);
  const entries = await ledgerEntries(deps.ledger);
  if (options.filingId === undefined) return reconcile({ period, entries, ...(options.layout ? { layout: options.layout } : {}) });
  if (deps.vat === undefined) throw new Error('reconcile with --filing needs the VAT service');
  const [filing, boxes] = await Promise.all([deps.vat.filings.get(options.filingId), deps.vat.filings.draftReturnBoxes(options.filingId)]);
  if (filing.reporting_period_start !== undefined && filing.reporting_period_end !== undefined) {
    if (filing.reporting_period_start !== period.start || filing.reporting_period_end !== period.end) {
      throw new Error(
        `filing ${filing.id} covers ${filing.reporting_period_start} … ${filing.reporting_period_end}, not ${period.label} (${period.start} … ${period.end})`,
      );
    }
  }
  return reconcile({
    period,
    entries,
    filing: { id: filing.id, currency: filing.currency, entity_jurisdiction: filing.entity_jurisdiction, boxes },
    ...(options.entityJurisdiction ? { entityJurisdiction: options.entityJurisdiction } : {}),
    ...(options.layout ? { layout: options.layout } : {}),
  });
}
