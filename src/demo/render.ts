import { DECIMAL_PATTERN, Money } from '../domain/money.js';
import type { DemoRecord, DemoResult } from './run.js';
import type { DemoVatRow } from './vat.js';

/** What `taxsync demo` prints: the tax engine's records, the VAT side, and what to try next. */

/** A refund fraction as the API carries it, with its percentage: `0.3125 (31.25%)`. */
function fraction(value: string | undefined): string {
  if (value === undefined || !DECIMAL_PATTERN.test(value)) return value ?? '?';
  return `${value} (${new Money(value).times(100).toDecimalPlaces(2).toString()}%)`;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/**
 * The arguments of `taxsync trace` for one of the demo's records: the connection and the platform's
 * id for a connection with a prefix (trace puts the prefix in front), else the source and the id.
 */
function traceArgs(r: { connection: string; source: string; external_id: string; platform_id: string }): string {
  return r.external_id === r.platform_id ? `${r.source} ${r.external_id}` : `${r.connection} ${r.platform_id}`;
}

function taxRow(r: DemoRecord): string[] {
  return [
    r.connection,
    r.record,
    r.external_id,
    r.arrived ? (r.tax_id ?? '') : 'NOT ARRIVED',
    r.amount === undefined ? (r.currency ? `${r.currency} (no lines)` : '') : `${r.currency ?? ''} ${r.amount}`.trim(),
    r.total_tax ?? '',
    r.record === 'refund' && r.arrived
      ? `${fraction(r.refund_linked_percentage)} of ${r.invoice_external_id ?? '?'}${r.linked ? '' : ' (NOT LINKED to it)'}`
      : (r.detail ?? ''),
  ];
}

/** What the service received for the row's submissions: `1 (201)`, `2 (201, 422)`, `?` when its log is not readable. */
function received(row: DemoVatRow): string {
  if (row.submissions.length === 0) return '';
  return row.submissions.map((s) => (s.received === undefined ? '?' : `${s.received.count} (${s.received.statuses.map((x) => x ?? 'no answer').join(', ') || '-'})`)).join(' / ');
}

function happened(row: DemoVatRow): string {
  const change = row.change === undefined ? '' : `${row.change}: `;
  switch (row.outcome) {
    case 'submitted':
      return `${change}submitted: ${row.detail}`;
    case 'not sent':
      return `${change}not sent: ${row.detail}`;
    case 'dead letter':
      return `${change}DEAD LETTER ${row.code ?? ''}: ${row.detail} (taxsync dlq list)`;
    case 'not settled':
      return `${change}NO OUTCOME YET (taxsync trace ${traceArgs(row)})`;
  }
}

function vatRow(row: DemoVatRow): string[] {
  const amounts = (pick: (s: DemoVatRow['submissions'][number]) => string | undefined) =>
    row.submissions.map((s) => pick(s) ?? '?').join(' / ');
  return [
    row.connection,
    row.change === undefined ? row.record : `${row.record} update`,
    row.external_id,
    amounts((s) => s.invoice_number),
    amounts((s) => (s.net === undefined ? undefined : `${s.currency ?? ''} ${s.net}`.trim())),
    amounts((s) => s.vat),
    received(row),
    happened(row),
  ];
}

/** Each update right after the row of the record it updates. */
function inOrder(rows: readonly DemoVatRow[]): DemoVatRow[] {
  const firsts = rows.filter((r) => r.change === undefined);
  const updates = rows.filter((r) => r.change !== undefined);
  const out = firsts.flatMap((r) => [r, ...updates.filter((u) => u.connection === r.connection && u.external_id === r.external_id)]);
  return [...out, ...updates.filter((u) => !out.includes(u))];
}

/** The records worth a trace: each connection's first with a VAT submission, else the first invoice. */
function tracedRecords(result: DemoResult): { connection: string; source: string; external_id: string; platform_id: string }[] {
  const submitted = result.vat.rows.filter((r) => r.change === undefined && r.submissions.length > 0);
  const one = submitted.filter((r, i) => submitted.findIndex((x) => x.connection === r.connection) === i);
  if (one.length > 0) return one;
  const invoice = result.records.find((r) => r.record === 'invoice');
  return invoice === undefined ? [] : [invoice];
}

/** The tables `taxsync demo` prints, and the next commands to try on what it sent. */
export function renderDemo(result: DemoResult): string {
  const arrived = result.records.filter((r) => r.arrived).length;
  const lines = [
    `Tax engine (the built-in emulator at ${result.emulator}): one line per record`,
    ...table(['connection', 'record', 'external id', 'tax engine id', 'amount', 'total tax', 'refund of / details'], result.records.map(taxRow)),
    '',
  ];
  if (result.vat.enabled) {
    const accepted = result.vat.rows.flatMap((r) => r.submissions).filter((s) => s.state === 'confirmed');
    const invoices = new Set(accepted.map((s) => `${s.entity_jurisdiction}/${s.invoice_number}`));
    lines.push(
      'VAT service (the same emulator): what became of each invoice and refund; "received" counts the submissions the service got for that invoice number',
      ...table(['connection', 'record', 'external id', 'VAT invoice', 'net', 'VAT', 'received', 'what happened'], inOrder(result.vat.rows).map(vatRow)),
      '',
      `${arrived} of ${result.records.length} records arrived in the tax engine (run ${result.run}); ${invoices.size} VAT invoice(s) accepted by the VAT service.`,
    );
  } else {
    lines.push(
      `${arrived} of ${result.records.length} records arrived in the tax engine (run ${result.run}). VAT is off on this daemon (no vat.registrations in its settings): nothing went to the VAT service.`,
    );
  }
  const traced = tracedRecords(result);
  if (traced.length > 0) {
    lines.push('Trace a record (every step it took, and its VAT ledger):', ...traced.map((r) => `  npx taxsync trace ${traceArgs(r)}`));
  }
  if (result.vat.filing !== undefined) {
    const f = result.vat.filing;
    lines.push(`File the VAT return of ${f.period} and compare it with what taxsync submitted:`, ...f.commands.map((c) => `  ${c}`));
  }
  lines.push('The walkthrough (break a call, see it in the dead-letter queue, replay it, reconcile VAT): docs/tour.md');
  return lines.join('\n');
}
