import type { Command } from 'commander';
import { RECORD_KINDS, type RecordKey } from '../../domain/record-key.js';
import { resendRecord, type ResendOutcome } from '../../queue/resend.js';
import { boot } from '../../daemon/boot.js';
import { openDlq } from '../open-dlq.js';

const RESENDABLE = RECORD_KINDS.filter((kind) => kind !== 'vat');

export function registerResendCommand(program: Command): void {
  program
    .command('resend')
    .argument('<source>', 'the record source, e.g. shopify or api')
    .argument('<external_id>', 'the record id at that source (refunds: refund-<id>)')
    .description("send a record's newest version again, even when its body is the one last accepted (--force of skip unchanged; audited)")
    .option('--kind <kind>', `only this kind: ${RESENDABLE.join(', ')} (default: every kind taxsync holds for the id)`)
    .option('--actor <name>', 'who is resending (the audit log; default: the OS user)')
    .option('--json', 'machine-readable output')
    .action(async (source: string, externalId: string, options: { kind?: string; actor?: string; json?: boolean }) => {
      if (options.kind !== undefined && !(RESENDABLE as readonly string[]).includes(options.kind)) {
        throw new Error(`--kind must be one of ${RESENDABLE.join(', ')} (VAT submissions are resent through their ledger: taxsync vat-ledger)`);
      }
      const booted = boot('resend', { logToStderr: true });
      try {
        const opened = await openDlq(booted, options.actor ? { actor: options.actor } : {});
        try {
          const results: { record: RecordKey; outcome: ResendOutcome }[] = [];
          for (const kind of options.kind ? [options.kind as (typeof RESENDABLE)[number]] : RESENDABLE) {
            const record = { kind, source, external_id: externalId };
            results.push({ record, outcome: await resendRecord(opened.deps, record) });
          }
          const queued = results.filter((r) => r.outcome === 'queued');
          if (options.json) process.stdout.write(`${JSON.stringify(queued.map((r) => r.record))}\n`);
          else if (queued.length === 0) process.stdout.write(`no record ${source}/${externalId} is known\n`);
          else process.stdout.write(`${queued.map((r) => `${r.record.kind} ${source}/${externalId}: queued, sent even if unchanged`).join('\n')}\n`);
          if (queued.length === 0) process.exitCode = 1;
        } finally {
          await opened.close();
        }
      } finally {
        await booted.lifecycle.shutdown('resend finished');
      }
    });
}
