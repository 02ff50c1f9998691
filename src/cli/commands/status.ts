import type { Command } from 'commander';
import { createWaitingIndex, describeAge, type WaitingList, type WaitingRecord } from '../../processors/waiting.js';
import { boot } from '../../daemon/boot.js';
import { statusReport, type StatusReport } from '../../dead-letters/service.js';
import { describeTally, renderTable } from '../../dead-letters/filter.js';
import { openDlq } from '../open-dlq.js';
import type { VatLedgerStatus } from '../../queue/vat-ledger.js';
import { createVarianceStore } from '../../variance/store.js';
import { CONNECTION_COLUMNS, connectionAges, connectionCells, type ConnectionAge } from '../../activity/silence.js';
import { lastEvents } from '../../activity/store.js';

/** Waiting records listed (oldest first); the total counts them all. */
const WAITING_SHOWN = 100;

function age(seconds: number | null): string {
  return seconds === null ? '-' : describeAge(seconds);
}

const recordName = (r: { kind: string; source: string; external_id: string }) => `${r.kind} ${r.source}/${r.external_id}`;

function waitsFor(w: WaitingRecord): string {
  return w.waiting_for === null ? w.reason : `${w.waiting_for.what} ${w.waiting_for.record.source}/${w.waiting_for.record.external_id}`;
}

function renderWaiting(waiting: WaitingList): string[] {
  if (waiting.total === 0) return ['waiting: none'];
  const more = waiting.total - waiting.records.length;
  return [
    `waiting for what they need: ${waiting.total} (a refund for its original is dead-lettered as REFUND_ORIGINAL_MISSING after TAXSYNC_REFUND_WAIT)`,
    renderTable(
      ['RECORD', 'WAITS FOR', 'AGE'],
      waiting.records.map((w) => [recordName(w.record), waitsFor(w), age(w.age_s)]),
    ),
    ...(more > 0 ? [`… and ${more} more`] : []),
  ];
}

export function renderVatLedgerStatus(s: VatLedgerStatus): string {
  return (
    `VAT ledger: ${s.unknown} unknown (sent, answer lost; resolved by the next attempt), ` +
    `${s.unresolved} unresolved (check the filing, then \`taxsync vat ledger confirm|release\`), ` +
    `${s.in_flight} in flight, ${s.pending} pending` +
    (s.attention > 0 ? `; ${s.attention} filed but not reported as they are (\`taxsync vat reconcile\` lists them; docs/operations.md)` : '')
  );
}

/** One row per connection: two shops of one source each have their own last event and silence. */
function renderConnections(connections: ConnectionAge[], silenceS: number): string[] {
  if (connections.length === 0) return ['connections: no event accepted yet'];
  return [
    `connections (silent: no event for more than ${describeAge(silenceS)}, TAXSYNC_SOURCE_SILENCE):`,
    renderTable(
      CONNECTION_COLUMNS.map((column) => column.toUpperCase()),
      connections.map((c) => connectionCells(c, describeAge)),
    ),
  ];
}

function render(report: StatusReport & { waiting: WaitingList; tax_variances: number; connections: ConnectionAge[]; source_silence_s: number }): string {
  const rows = Object.entries(report.queues).map(([name, q]) => [name, String(q.waiting), String(q.active), String(q.delayed), String(q.failed), age(q.oldest_waiting_age_s)]);
  return [
    renderTable(['QUEUE', 'WAITING', 'ACTIVE', 'DELAYED', 'FAILED', 'OLDEST WAITING'], rows),
    '',
    `dead-letter: ${describeTally(report.dead_letter)}`,
    renderVatLedgerStatus(report.vat_ledger),
    `tax variances: ${report.tax_variances} invoice(s) where the tax charged differs from the engine's (\`taxsync variance\`)`,
    ...renderConnections(report.connections, report.source_silence_s),
    '',
    ...renderWaiting(report.waiting),
  ].join('\n');
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('queue sizes, the age of the oldest waiting job, dead-letter entries by code, VAT ledger entries still open (unknown, unresolved, in flight, pending), records waiting for their original, and each connection\'s last event (SILENT past TAXSYNC_SOURCE_SILENCE)')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const booted = boot('status', { logToStderr: true });
      try {
        const opened = await openDlq(booted);
        try {
          const report = {
            ...(await statusReport(opened.deps)),
            // From the waiting index (a sorted set the workers keep): no scan of the records.
            waiting: await createWaitingIndex(opened.redis, opened.deps.keys).list({ limit: WAITING_SHOWN }),
            tax_variances: await createVarianceStore(opened.redis, opened.deps.keys).count(),
            connections: connectionAges(await lastEvents(opened.redis, opened.deps.keys), booted.connections, new Date(), booted.config.sourceSilenceMs),
            source_silence_s: Math.floor(booted.config.sourceSilenceMs / 1000),
          };
          process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : `${render(report)}\n`);
        } finally {
          await opened.close();
        }
      } finally {
        await booted.lifecycle.shutdown('status finished');
      }
    });
}
