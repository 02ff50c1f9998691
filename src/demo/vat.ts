import { z } from 'zod';
import type { VatClient } from '../api/index.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import type { VatSettings } from '../mapping/index.js';
import type { RedisClient } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import type { RecordStore } from '../queue/record-state.js';
import { readTrace, type TraceEntry } from '../queue/trace.js';
import type { LedgerEntry, VatLedger } from '../queue/vat-ledger.js';

/**
 * The VAT side of `taxsync demo`: what became of each sample invoice and refund on the VAT path
 * (the `vat` record's trace and ledger in the daemon's Redis, as `taxsync trace` shows them), and
 * what the VAT service holds (its request log: every submission it received and answered).
 */

export interface VatStateDeps {
  redis: RedisClient;
  keys: Keys;
  records: RecordStore;
  ledger: Pick<VatLedger, 'forRecord'>;
}

/** One VAT transaction that the ledger says taxsync submitted for a record. */
export interface DemoVatSubmission {
  invoice_number: string | undefined;
  entity_jurisdiction: string | undefined;
  reporting_period: string | undefined;
  net: string | undefined;
  vat: string | undefined;
  currency: string | undefined;
  /** The ledger's state: confirmed once the service accepted it. */
  state: LedgerEntry['state'];
  transaction_id: string | undefined;
  /** The submissions the VAT service received for this invoice number (undefined: its request log is not readable). */
  received: { count: number; statuses: (number | null)[] } | undefined;
}

export interface DemoVatRow {
  /** The connection whose record it is. */
  connection: string;
  record: 'invoice' | 'refund';
  source: string;
  /** As the connection writes it (its prefix in front). */
  external_id: string;
  /** The platform's own id. */
  platform_id: string;
  /** For an update: what changed. */
  change?: string;
  settled: boolean;
  outcome: 'submitted' | 'not sent' | 'dead letter' | 'not settled';
  /** What happened, in taxsync's words (the trace's last answer, or the dead letter). */
  detail: string;
  code?: string;
  submissions: DemoVatSubmission[];
}

/** Where the VAT record of a sample stands: settled once the version it expects is applied (or dead-lettered). */
export async function vatRecordSettled(deps: Pick<VatStateDeps, 'records'>, key: RecordKey, expectedSeq: number): Promise<boolean> {
  const state = await deps.records.read(key);
  return state.seq >= expectedSeq && state.appliedSeq >= state.seq;
}

/** The newest answer or dead letter in a trace. */
function lastOutcome(trace: readonly TraceEntry[]): TraceEntry | undefined {
  for (let i = trace.length - 1; i >= 0; i--) {
    const entry = trace[i]!;
    if (entry.step === 'answered' || entry.step === 'dead-lettered') return entry;
  }
  return undefined;
}

/** "nothing sent: VAT for invoice 44…: not submitted: <why>" → "<why>": the record is in the row already. */
function plain(detail: string): string {
  return detail
    .replace(/^nothing sent:\s*/, '')
    .replace(/^VAT for (invoice|refund) \S+:\s*/, '')
    .replace(/^not submitted:\s*/, '');
}

function submissionOf(entry: LedgerEntry): Omit<DemoVatSubmission, 'received'> {
  let body: { invoice_number?: unknown; entity_jurisdiction?: unknown } = {};
  try {
    if (entry.body !== undefined) body = JSON.parse(entry.body) as typeof body;
  } catch {
    // an unreadable body leaves both unknown
  }
  return {
    invoice_number: typeof body.invoice_number === 'string' ? body.invoice_number : undefined,
    entity_jurisdiction: typeof body.entity_jurisdiction === 'string' ? body.entity_jurisdiction : undefined,
    reporting_period: entry.reporting_period,
    net: entry.net,
    vat: entry.vat,
    currency: entry.currency,
    state: entry.state,
    transaction_id: entry.transaction_id,
  };
}

const RequestLog = z.looseObject({ requests: z.array(z.looseObject({ status: z.number().nullable(), outcome: z.string().optional() })) });

/** The VAT submissions the emulator received for one (entity jurisdiction, invoice number), from its control API. */
export async function receivedByService(emulatorUrl: string, entityJurisdiction: string, invoiceNumber: string): Promise<DemoVatSubmission['received']> {
  const query = new URLSearchParams({ endpoint: 'vat.submit', record_key: `vat:${entityJurisdiction}:${invoiceNumber}` });
  try {
    const response = await fetch(`${emulatorUrl}/__emulator/requests?${query.toString()}`, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return undefined;
    const parsed = RequestLog.safeParse(await response.json());
    if (!parsed.success) return undefined;
    return { count: parsed.data.requests.length, statuses: parsed.data.requests.map((r) => r.status) };
  } catch {
    return undefined;
  }
}

/** The row of one sample at this moment: its VAT record's last outcome and the submissions behind it. */
export async function vatRow(
  deps: VatStateDeps & { emulatorUrl: string },
  sample: { connection: string; record: 'invoice' | 'refund'; source: string; external_id: string; platform_id: string; change?: string },
  expectedSeq: number,
): Promise<DemoVatRow> {
  const key: RecordKey = { kind: 'vat', source: sample.source, external_id: sample.external_id };
  const [settled, trace, entries] = await Promise.all([
    vatRecordSettled(deps, key, expectedSeq),
    readTrace(deps.redis, deps.keys, recordKeyString(key)),
    deps.ledger.forRecord(recordKeyString(key)),
  ]);
  const last = settled ? lastOutcome(trace) : undefined;
  const submissions = await Promise.all(
    entries.map(async (entry) => {
      const s = submissionOf(entry);
      const received =
        s.entity_jurisdiction === undefined || s.invoice_number === undefined ? undefined : await receivedByService(deps.emulatorUrl, s.entity_jurisdiction, s.invoice_number);
      return { ...s, received };
    }),
  );
  const base = {
    connection: sample.connection,
    record: sample.record,
    source: sample.source,
    external_id: sample.external_id,
    platform_id: sample.platform_id,
    ...(sample.change === undefined ? {} : { change: sample.change }),
    settled,
    submissions,
  };
  if (!settled || last === undefined) return { ...base, outcome: 'not settled', detail: 'not processed yet' };
  if (last.step === 'dead-lettered') {
    return { ...base, outcome: 'dead letter', detail: last.detail ?? '', ...(last.code ? { code: last.code } : {}) };
  }
  const detail = last.detail ?? '';
  // Submitted only when the ledger holds what was sent; the service's count says how often.
  const sent = !/^nothing sent\b/.test(detail) && submissions.length > 0;
  return { ...base, outcome: sent ? 'submitted' : 'not sent', detail: plain(detail) };
}

/** `YYYY-MM-DD` of the last day of the month `months` after the one `first` (YYYY-MM-01) starts. */
function lastDay(first: string, months: number): string {
  const [year, month] = first.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month - 1 + months, 0)).toISOString().slice(0, 10);
}

export interface DemoFilingHint {
  registration_id: string;
  entity_jurisdiction: string;
  /** `YYYY-Qn` or `YYYY-MM`, as `taxsync vat reconcile --period` takes it. */
  period: string;
  start: string;
  end: string;
  commands: string[];
}

/**
 * How to file and reconcile the period of an accepted submission: the registration whose entity
 * jurisdiction it was filed under, and that registration's reporting period around it.
 */
export async function filingHint(vat: VatClient, settings: VatSettings, submission: DemoVatSubmission): Promise<DemoFilingHint | undefined> {
  const ej = submission.entity_jurisdiction;
  const first = submission.reporting_period;
  if (ej === undefined || first === undefined || !/^\d{4}-\d{2}-01$/.test(first)) return undefined;
  let registration: { id: string; iso?: string | undefined } | undefined;
  for await (const r of vat.registrations.iterate({ entity_jurisdiction: ej })) {
    if (r.entity_jurisdiction?.toLowerCase() === ej.toLowerCase()) registration = { id: r.id, iso: r.taxable_jurisdiction_detail?.iso };
  }
  if (registration === undefined) return undefined;
  const configured = settings.registrations.find((r) => r.entity_jurisdiction === ej || (registration?.iso !== undefined && r.taxable_jurisdiction === registration.iso));
  const monthly = (configured?.reporting_period ?? settings.reporting_period) === 'monthly';
  const month = Number(first.slice(5, 7));
  const period = monthly ? first.slice(0, 7) : `${first.slice(0, 4)}-Q${Math.floor((month - 1) / 3) + 1}`;
  const end = lastDay(first, monthly ? 1 : 3);
  return {
    registration_id: registration.id,
    entity_jurisdiction: ej,
    period,
    start: first,
    end,
    commands: [
      `npx taxsync vat filings create --registration-filing-type ${registration.id} --start ${first} --end ${end}`,
      `npx taxsync vat reconcile --period ${period} --filing <the id that filings create printed>`,
    ],
  };
}
