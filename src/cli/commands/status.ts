import type { Command } from 'commander';
import { boot } from '../../runtime/boot.js';
import { statusReport, type StatusReport } from '../../runtime/dlq.js';
import { describeTally, renderTable } from '../../runtime/dlq-filter.js';
import { openDlq } from '../../runtime/dlq-open.js';

function age(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 360) / 10} h`;
}

function render(report: StatusReport): string {
  const rows = Object.entries(report.queues).map(([name, q]) => [name, String(q.waiting), String(q.active), String(q.delayed), String(q.failed), age(q.oldest_waiting_age_s)]);
  return [
    renderTable(['QUEUE', 'WAITING', 'ACTIVE', 'DELAYED', 'FAILED', 'OLDEST WAITING'], rows),
    '',
    `dead-letter: ${describeTally(report.dead_letter)}`,
    `VAT ledger: ${report.vat_ledger.unknown} unknown (sent, answer lost; resolved by the next attempt or \`taxsync vat\` reconcile)`,
  ].join('\n');
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('queue sizes, the age of the oldest waiting job, dead-letter entries by code, VAT ledger unknowns')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const booted = boot('status', { logToStderr: true });
      try {
        const opened = await openDlq(booted);
        try {
          const report = await statusReport(opened.deps);
          process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : `${render(report)}\n`);
        } finally {
          await opened.close();
        }
      } finally {
        await booted.lifecycle.shutdown('status finished');
      }
    });
}
