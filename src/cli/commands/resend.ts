import type { Command } from 'commander';
import { RECORD_KINDS, type RecordKey } from '../../domain/record-key.js';
import { resendRecord, type ResendOutcome } from '../../queue/resend.js';
import { boot } from '../../daemon/boot.js';
import { describeNamedRecord, recordOfArguments } from '../connection-option.js';
import { openDlq } from '../open-dlq.js';

const RESENDABLE = RECORD_KINDS.filter((kind) => kind !== 'vat');

export function registerResendCommand(program: Command): void {
  program
    .command('resend')
    .argument('<connection|source>', "a connection's id (its prefix is put in front of the id: resend shop-fr 1001), or a record source as stored, e.g. shopify or api")
    .argument('<external_id>', "the record's id at the platform (refunds: refund-<id>)")
    .description("send a record's newest version again, even when its body is the one last accepted (--force of skip unchanged; audited)")
    .option('--kind <kind>', `only this kind: ${RESENDABLE.join(', ')} (default: every kind taxsync holds for the id)`)
    .option('--actor <name>', 'who is resending (the audit log; default: the OS user)')
    .option('--json', 'machine-readable output')
    .action(async (first: string, id: string, options: { kind?: string; actor?: string; json?: boolean }) => {
      if (options.kind !== undefined && !(RESENDABLE as readonly string[]).includes(options.kind)) {
        throw new Error(`--kind must be one of ${RESENDABLE.join(', ')} (VAT submissions are resent through their ledger: taxsync vat-ledger)`);
      }
      const booted = boot('resend', { logToStderr: true });
      const named = recordOfArguments(booted.connections, first, id);
      const { source, external_id: externalId } = named;
      const connection = booted.connections.ofRecord(source, externalId)?.id ?? null;
      try {
        const opened = await openDlq(booted, options.actor ? { actor: options.actor } : {});
        try {
          const results: { record: RecordKey; outcome: ResendOutcome }[] = [];
          for (const kind of options.kind ? [options.kind as (typeof RESENDABLE)[number]] : RESENDABLE) {
            const record = { kind, source, external_id: externalId };
            results.push({ record, outcome: await resendRecord(opened.deps, record) });
          }
          const queued = results.filter((r) => r.outcome === 'queued');
          const which = describeNamedRecord(first, named);
          const of = connection === null ? '' : ` (connection ${connection})`;
          if (options.json) process.stdout.write(`${JSON.stringify(queued.map((r) => ({ ...r.record, connection })))}\n`);
          else if (queued.length === 0) process.stdout.write(`no record ${which} is known\n`);
          else process.stdout.write(`${queued.map((r) => `${r.record.kind} ${source}/${externalId}${of}: queued, sent even if unchanged`).join('\n')}\n`);
          if (queued.length === 0) process.exitCode = 1;
        } finally {
          await opened.close();
        }
      } finally {
        await booted.lifecycle.shutdown('resend finished');
      }
    });
}
