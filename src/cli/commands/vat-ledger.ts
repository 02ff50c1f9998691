import type { Command } from 'commander';
import type { Booted } from '../../daemon/boot.js';
import { openDlq } from '../open-dlq.js';
import { decideLedgerEntry, renderLedgerEntry, showLedgerEntry } from '../../vat-ops/ledger-commands.js';

interface Json {
  json?: boolean;
}

/**
 * `taxsync vat ledger show|confirm|release <entity_jurisdiction> <invoice_number>` (docs/vat.md,
 * "Operator commands"). `run` and `print` are the vat command's own (boot and shut down, one
 * JSON value or text on stdout).
 */
export function registerVatLedgerCommands(
  vat: Command,
  helpers: { run: (name: string, fn: (booted: Booted) => Promise<void>) => Promise<void>; print: (options: Json, value: unknown, text: () => string) => void },
): void {
  const { run, print } = helpers;
  const ledger = vat
    .command('ledger')
    .description("the VAT submission ledger: one entry with its history, and an operator's decision on an outcome taxsync cannot know");

  async function withLedger(name: string, actor: string | undefined, fn: (deps: Awaited<ReturnType<typeof openDlq>>['deps']) => Promise<void>): Promise<void> {
    await run(`ledger ${name}`, async (booted) => {
      const opened = await openDlq(booted, actor === undefined ? {} : { actor });
      try {
        await fn(opened.deps);
      } finally {
        await opened.close();
      }
    });
  }

  ledger
    .command('show')
    .argument('<entity_jurisdiction>', 'the entity jurisdiction UUID')
    .argument('<invoice_number>', 'the invoice number as submitted (quote it: split parts read "INV-1 (19.00% standard)")')
    .description('one ledger entry: state, the body sent (its hash), the record that claimed it, and every attempt')
    .option('--json', 'machine-readable output')
    .action(async (ej: string, number: string, options: Json) => {
      await withLedger('show', undefined, async (deps) => {
        const view = await showLedgerEntry(deps, ej, number);
        if (view === undefined) throw new Error(`no ledger entry for ${number} in entity jurisdiction ${ej}`);
        print(options, view, () => renderLedgerEntry(view));
      });
    });

  for (const action of ['confirm', 'release'] as const) {
    ledger
      .command(action)
      .argument('<entity_jurisdiction>', 'the entity jurisdiction UUID')
      .argument('<invoice_number>', 'the invoice number as submitted')
      .description(
        action === 'confirm'
          ? 'after checking the filing: the submission IS there (its outcome was unknown) — mark it confirmed and put the invoice back to work'
          : 'after checking the filing: the submission is NOT there — send it again (a duplicate answer is then a real conflict) and put the invoice back to work',
      )
      .option('--actor <name>', 'who decides, for the history and the audit log (default: the OS user)')
      .option('--json', 'machine-readable output')
      .action(async (ej: string, number: string, options: Json & { actor?: string }) => {
        await withLedger(action, options.actor, async (deps) => {
          const result = await decideLedgerEntry(deps, ej, number, action, deps.audit.actor);
          if (!result.ok) throw new Error(`vat ledger ${action} ${number}: ${result.reason}`);
          print(options, result, () =>
            [
              `${number}: ${result.from} → ${result.to}`,
              ...result.replayed.map((r) => `  dead letter ${r.id}: ${r.outcome} (${r.detail})`),
              result.requeued ? `  ${result.record.source}/${result.record.external_id} re-queued on vat-submissions` : '',
            ]
              .filter(Boolean)
              .join('\n'),
          );
        });
      });
  }
}
