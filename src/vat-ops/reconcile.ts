import type { DraftReturnBoxes } from '../api/schemas/index.js';
import { Money, formatMoney, money, type Decimal } from '../domain/money.js';
import type { LedgerEntry, LedgerState } from '../queue/vat-ledger.js';
import { reportingPeriodRange } from '../mapping/vat/index.js';

/**
 * `taxsync vat reconcile` (PURE): the ledger's confirmed VAT submissions of a period against a
 * filing's draft return boxes, before anyone approves the return. The VAT service has no endpoint
 * to read a submission back, so the boxes are the only place to see what it counted.
 *
 * The spec does not say which box holds what (its boxes are `{box_number, description, value}`),
 * so the box layout is an input; the default is the emulator's (src/emulator/vat/filings.ts):
 * net = box 6 (net sales) + box 7 (net purchases of imported services), VAT = box 1 (output VAT)
 * + box 2 (reverse-charge VAT due), count = box 9.
 */

export interface ReportingPeriodSpan {
  /** As given: `2025-03` or `2025-Q1`. */
  label: string;
  start: string;
  end: string;
}

/** `YYYY-MM` (a month) or `YYYY-Qn` (a quarter) → its first and last day. */
export function parseReportingPeriod(text: string): ReportingPeriodSpan {
  const trimmed = text.trim();
  const month = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(trimmed);
  if (month) return { label: trimmed, ...reportingPeriodRange(`${month[1]}-${month[2]}-01`, 'monthly') };
  const quarter = /^(\d{4})-[Qq]([1-4])$/.exec(trimmed);
  if (quarter) {
    const first = (Number(quarter[2]) - 1) * 3 + 1;
    return { label: `${quarter[1]}-Q${quarter[2]}`, ...reportingPeriodRange(`${quarter[1]}-${String(first).padStart(2, '0')}-01`, 'quarterly') };
  }
  throw new Error(`period ${JSON.stringify(text)} is neither YYYY-MM nor YYYY-Qn`);
}

/** A ledger entry with the two parts of its key. */
export interface KeyedLedgerEntry {
  entity_jurisdiction: string;
  invoice_number: string;
  entry: LedgerEntry;
}

/**
 * The entity jurisdiction and invoice number of a ledger key (`<prefix>:vat:<ej>:<encoded number>`;
 * the number is URI-encoded, so it holds no `:`, and a UUID holds none either).
 */
export function parseLedgerKey(key: string): { entity_jurisdiction: string; invoice_number: string } | undefined {
  const parts = key.split(':');
  if (parts.length < 3 || parts[parts.length - 3] !== 'vat') return undefined;
  try {
    return { entity_jurisdiction: parts[parts.length - 2]!, invoice_number: decodeURIComponent(parts[parts.length - 1]!) };
  } catch {
    return undefined;
  }
}

export interface BoxLayout {
  /** Boxes whose sum is the total net of the period's transactions. */
  net: string[];
  /** Boxes whose sum is the total VAT of the period's transactions. */
  vat: string[];
  /** The box holding the number of transactions, when the return has one. */
  count?: string;
}

export const EMULATOR_BOX_LAYOUT: BoxLayout = { net: ['6', '7'], vat: ['1', '2'], count: '9' };

export interface Totals {
  count: number;
  net: string;
  vat: string;
}

export interface CurrencyTotals extends Totals {
  currency: string;
}

export interface JurisdictionTotals extends CurrencyTotals {
  entity_jurisdiction: string;
}

/** An entry that is not (or not yet) confirmed. */
export interface OpenEntry {
  entity_jurisdiction: string;
  invoice_number: string;
  state: LedgerState;
  reporting_period: string | undefined;
  net: string | undefined;
  vat: string | undefined;
  currency: string | undefined;
  attempts: number;
  record: string | undefined;
  note: string | undefined;
  /** A confirmed entry the service will not report as it is (committed false, a status error). */
  attention?: string;
}

export interface FilingSide {
  id: string;
  currency: string | undefined;
  entity_jurisdiction: string | undefined;
  reporting_period: string | undefined;
  /** What the boxes say, per the layout. */
  /** undefined where a box of the layout is missing or unreadable (a `box` difference says which). */
  totals: { count: number | undefined; net: string | undefined; vat: string | undefined };
  boxes: DraftReturnBoxes['boxes'];
}

export interface Difference {
  field: 'count' | 'net' | 'vat' | 'currency' | 'box';
  message: string;
  ledger?: string;
  filing?: string;
  /** filing − ledger. */
  difference?: string;
}

export interface ReconcileReport {
  period: ReportingPeriodSpan;
  ledger: {
    confirmed: Totals & { by_currency: CurrencyTotals[]; by_entity_jurisdiction: JurisdictionTotals[] };
    /** pending, in_flight, unknown or unresolved: the outcome is open, so the comparison is uncertain. */
    uncertain: OpenEntry[];
    rejected: OpenEntry[];
    /**
     * Confirmed (counted above: the service stored them) but the service will not report them as
     * they are: the filing will lack them until an operator acts, so no comparison that holds one
     * matches.
     */
    attention: OpenEntry[];
  };
  filing?: FilingSide;
  /** What the filing is compared with: the confirmed entries of its entity jurisdiction (when known) and currency. */
  compared?: Totals & { entity_jurisdiction: string | undefined; currency: string | undefined };
  differences: Difference[];
  /** With a filing: no difference and nothing uncertain among the compared entries. */
  matches: boolean | undefined;
}

export interface ReconcileInput {
  period: ReportingPeriodSpan;
  entries: readonly KeyedLedgerEntry[];
  filing?: {
    id: string;
    currency?: string | undefined;
    entity_jurisdiction?: string | undefined;
    boxes: DraftReturnBoxes;
  };
  /** Restricts the ledger side of the comparison (the filing's own, when the service names it). */
  entityJurisdiction?: string;
  layout?: BoxLayout;
}

const inPeriod = (entry: LedgerEntry, period: ReportingPeriodSpan) =>
  entry.reporting_period !== undefined && entry.reporting_period >= period.start && entry.reporting_period <= period.end;

const amount = (value: string | undefined): Decimal => (value === undefined || value === '' ? new Money(0) : money(value));
const two = (value: Decimal) => formatMoney(value, 2);

interface Acc {
  count: number;
  net: Decimal;
  vat: Decimal;
}
const newAcc = (): Acc => ({ count: 0, net: new Money(0), vat: new Money(0) });
const add = (acc: Acc, entry: LedgerEntry) => {
  acc.count += 1;
  acc.net = acc.net.plus(amount(entry.net));
  acc.vat = acc.vat.plus(amount(entry.vat));
};
const totals = (acc: Acc): Totals => ({ count: acc.count, net: two(acc.net), vat: two(acc.vat) });

function open(e: KeyedLedgerEntry): OpenEntry {
  return {
    entity_jurisdiction: e.entity_jurisdiction,
    invoice_number: e.invoice_number,
    state: e.entry.state,
    reporting_period: e.entry.reporting_period,
    net: e.entry.net,
    vat: e.entry.vat,
    currency: e.entry.currency,
    attempts: e.entry.attempts,
    record: e.entry.record,
    note: e.entry.note,
    ...(e.entry.attention === undefined ? {} : { attention: e.entry.attention }),
  };
}

/**
 * The sum of the boxes `numbers`, or undefined when one is missing or has no readable value: that
 * is said as a `box` difference, and the total is not compared (read as 0.00 it would also show a
 * difference of the whole amount that is not in the return).
 */
function sumBoxes(boxes: DraftReturnBoxes['boxes'], numbers: readonly string[], differences: Difference[]): Decimal | undefined {
  let sum: Decimal | undefined = new Money(0);
  for (const n of numbers) {
    const box = boxes.find((b) => b.box_number.trim() === n);
    if (box === undefined) {
      differences.push({ field: 'box', message: `the draft return has no box ${n}` });
      sum = undefined;
    } else if (box.value === undefined || box.value.trim() === '') {
      differences.push({ field: 'box', message: `box ${n} of the draft return has no value taxsync can read` });
      sum = undefined;
    } else if (sum !== undefined) {
      sum = sum.plus(amount(box.value));
    }
  }
  return sum;
}

export function reconcile(input: ReconcileInput): ReconcileReport {
  const { period } = input;
  const layout = input.layout ?? EMULATOR_BOX_LAYOUT;
  const of = input.entries.filter((e) => inPeriod(e.entry, period));
  const confirmed = of.filter((e) => e.entry.state === 'confirmed');

  const all = newAcc();
  const byCurrency = new Map<string, Acc>();
  const byEj = new Map<string, Acc>();
  for (const e of confirmed) {
    const currency = e.entry.currency ?? '';
    add(all, e.entry);
    const c = byCurrency.get(currency) ?? newAcc();
    add(c, e.entry);
    byCurrency.set(currency, c);
    const jKey = `${e.entity_jurisdiction}\u0000${currency}`;
    const j = byEj.get(jKey) ?? newAcc();
    add(j, e.entry);
    byEj.set(jKey, j);
  }
  const sortBy = <T>(items: T[], key: (t: T) => string) => items.sort((a, b) => key(a).localeCompare(key(b)));

  const report: ReconcileReport = {
    period,
    ledger: {
      confirmed: {
        ...totals(all),
        by_currency: sortBy(
          [...byCurrency].map(([currency, acc]) => ({ currency, ...totals(acc) })),
          (t) => t.currency,
        ),
        by_entity_jurisdiction: sortBy(
          [...byEj].map(([k, acc]) => {
            const [entity_jurisdiction, currency] = k.split('\u0000') as [string, string];
            return { entity_jurisdiction, currency, ...totals(acc) };
          }),
          (t) => `${t.entity_jurisdiction} ${t.currency}`,
        ),
      },
      uncertain: sortBy(
        of.filter((e) => e.entry.state === 'pending' || e.entry.state === 'in_flight' || e.entry.state === 'unknown' || e.entry.state === 'unresolved').map(open),
        (o) => `${o.entity_jurisdiction} ${o.invoice_number}`,
      ),
      rejected: sortBy(
        of.filter((e) => e.entry.state === 'rejected').map(open),
        (o) => `${o.entity_jurisdiction} ${o.invoice_number}`,
      ),
      attention: sortBy(
        confirmed.filter((e) => e.entry.attention !== undefined).map(open),
        (o) => `${o.entity_jurisdiction} ${o.invoice_number}`,
      ),
    },
    differences: [],
    matches: undefined,
  };
  if (input.filing === undefined) return report;

  const { filing } = input;
  const differences: Difference[] = [];
  const boxes = filing.boxes.boxes;
  const currency = filing.currency ?? boxes.find((b) => b.currency !== undefined)?.currency;
  const ej = input.entityJurisdiction ?? filing.entity_jurisdiction;
  const boxNet = sumBoxes(boxes, layout.net, differences);
  const boxVat = sumBoxes(boxes, layout.vat, differences);
  let boxCount: number | undefined;
  if (layout.count !== undefined) {
    const box = boxes.find((b) => b.box_number.trim() === layout.count);
    if (box === undefined) differences.push({ field: 'box', message: `the draft return has no box ${layout.count}` });
    else if (box.value === undefined || box.value.trim() === '') differences.push({ field: 'box', message: `box ${layout.count} of the draft return has no value taxsync can read` });
    else boxCount = amount(box.value).toNumber();
  }
  report.filing = {
    id: filing.id,
    currency,
    entity_jurisdiction: ej,
    reporting_period: filing.boxes.reporting_period,
    totals: { count: boxCount, net: boxNet && two(boxNet), vat: boxVat && two(boxVat) },
    boxes,
  };

  // The filing covers one entity jurisdiction and one currency: compare with those entries.
  const relevant = (e: KeyedLedgerEntry) =>
    (ej === undefined || e.entity_jurisdiction === ej) && (currency === undefined || e.entry.currency === currency);
  const compared = newAcc();
  for (const e of confirmed) if (relevant(e)) add(compared, e.entry);
  report.compared = { ...totals(compared), entity_jurisdiction: ej, currency };

  const otherCurrencies = [...byCurrency.keys()].filter((c) => currency !== undefined && c !== currency);
  if (otherCurrencies.length > 0) {
    differences.push({
      field: 'currency',
      message: `confirmed entries in ${otherCurrencies.join(', ')} are not in this ${currency} filing (file or check them separately)`,
    });
  }
  if (boxCount !== undefined && boxCount !== compared.count) {
    differences.push({
      field: 'count',
      message: `the ledger has ${compared.count} confirmed submission(s), box ${layout.count} counts ${boxCount}`,
      ledger: String(compared.count),
      filing: String(boxCount),
      difference: String(boxCount - compared.count),
    });
  }
  const compare = (field: 'net' | 'vat', ledgerValue: Decimal, filingValue: Decimal | undefined, numbers: string[]) => {
    if (filingValue === undefined || ledgerValue.equals(filingValue)) return;
    differences.push({
      field,
      message: `${field} ${two(ledgerValue)} in the ledger, ${two(filingValue)} in box ${numbers.join(' + box ')}`,
      ledger: two(ledgerValue),
      filing: two(filingValue),
      difference: two(filingValue.minus(ledgerValue)),
    });
  };
  compare('net', compared.net, boxNet, layout.net);
  compare('vat', compared.vat, boxVat, layout.vat);

  report.differences = differences;
  const here = (o: OpenEntry) => (ej === undefined || o.entity_jurisdiction === ej) && (currency === undefined || o.currency === currency);
  const uncertainHere = report.ledger.uncertain.some(here);
  report.matches = differences.length === 0 && !uncertainHere && !report.ledger.attention.some(here);
  return report;
}

/** The report as text, for a terminal. */
export function renderReconcile(report: ReconcileReport): string {
  const lines: string[] = [];
  const { confirmed, uncertain, rejected, attention } = report.ledger;
  lines.push(`period ${report.period.label} (${report.period.start} … ${report.period.end})`);
  lines.push(`ledger: ${confirmed.count} confirmed submission(s)`);
  for (const c of confirmed.by_currency) lines.push(`  ${c.currency.padEnd(4)} count ${c.count}  net ${c.net}  vat ${c.vat}`);
  for (const j of confirmed.by_entity_jurisdiction) {
    lines.push(`  entity jurisdiction ${j.entity_jurisdiction} ${j.currency}: count ${j.count}  net ${j.net}  vat ${j.vat}`);
  }
  if (report.filing !== undefined && report.compared !== undefined) {
    const f = report.filing;
    lines.push(`filing ${f.id}${f.reporting_period ? ` (${f.reporting_period})` : ''}${f.currency ? ` ${f.currency}` : ''}:`);
    lines.push(`  boxes:  count ${f.totals.count ?? '-'}  net ${f.totals.net ?? '-'}  vat ${f.totals.vat ?? '-'}`);
    lines.push(`  ledger: count ${report.compared.count}  net ${report.compared.net}  vat ${report.compared.vat}${report.compared.entity_jurisdiction ? ` (entity jurisdiction ${report.compared.entity_jurisdiction})` : ''}`);
  }
  const row = (o: OpenEntry) =>
    `  ${o.state.padEnd(9)} ${o.entity_jurisdiction} ${o.invoice_number}  ${o.net ?? '?'} + ${o.vat ?? '?'} ${o.currency ?? ''}  attempts ${o.attempts}${o.note ? `  ${o.note}` : ''}`;
  if (uncertain.length > 0) {
    lines.push(`${uncertain.length} submission(s) still open (the comparison is uncertain until they settle):`);
    lines.push(...uncertain.map(row));
  }
  if (rejected.length > 0) {
    lines.push(`${rejected.length} rejected submission(s) (not in any filing; see the dead-letter queue):`);
    lines.push(...rejected.map(row));
  }
  if (attention.length > 0) {
    lines.push(`${attention.length} confirmed submission(s) the service will not report as they are (check each in the service before approving; docs/operations.md):`);
    lines.push(...attention.map((o) => `${row(o)}  — ${o.attention ?? ''}`));
  }
  if (report.matches === undefined) lines.push('no filing given: ledger side only');
  else if (report.differences.length === 0 && report.matches) lines.push('MATCH: the draft return agrees with the ledger');
  else {
    lines.push(
      report.differences.length > 0
        ? 'DIFFERENT:'
        : uncertain.length > 0
          ? 'UNCERTAIN: totals agree but submissions are still open'
          : 'ATTENTION: totals agree but the service will not report submissions listed above as they are',
    );
    for (const d of report.differences) lines.push(`  ${d.field}: ${d.message}${d.difference !== undefined ? ` (filing − ledger = ${d.difference})` : ''}`);
  }
  return lines.join('\n');
}
