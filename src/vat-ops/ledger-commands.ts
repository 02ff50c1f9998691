import { parseRecordKeyString, recordKeyString, type RecordKey } from '../domain/record-key.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { createRequeuer } from '../queue/requeue.js';
import type { LedgerAttempt, LedgerEntry, LedgerState } from '../queue/vat-ledger.js';
import { replayEntry, type DlqDeps, type ReplayResult } from '../dead-letters/service.js';

/**
 * `taxsync vat ledger show|confirm|release <entity_jurisdiction> <invoice_number>` (docs/vat.md,
 * "Operator commands"): one ledger entry with its history, and an operator's decision on an
 * outcome taxsync cannot know (VAT_OUTCOME_UNRESOLVED, or an unknown one) after checking the
 * filing. A decision also puts the invoice back to work — its VAT dead letters are replayed, or
 * its record is re-queued — so the change that waited behind the unknown is handled in one step.
 */

export interface LedgerEntryView {
  entry: LedgerEntry;
  history: LedgerAttempt[];
}

export async function showLedgerEntry(deps: Pick<DlqDeps, 'ledger'>, ej: string, number: string): Promise<LedgerEntryView | undefined> {
  const entry = await deps.ledger.get(ej, number);
  if (entry === undefined) return undefined;
  return { entry, history: await deps.ledger.history(ej, number) };
}

export type Decision =
  | { ok: true; from: LedgerState; to: 'confirmed' | 'pending'; record: RecordKey; replayed: ReplayResult[]; requeued: boolean }
  | { ok: false; reason: string };

export async function decideLedgerEntry(deps: DlqDeps, ej: string, number: string, action: 'confirm' | 'release', actor: string): Promise<Decision> {
  const entry = await deps.ledger.get(ej, number);
  if (entry === undefined) return { ok: false, reason: `no ledger entry for ${number} in entity jurisdiction ${ej}` };
  const decided = await deps.ledger.operator(ej, number, action, actor);
  if (!decided.ok) return decided;
  if (entry.record === undefined) return { ok: true, from: decided.from, to: action === 'confirm' ? 'confirmed' : 'pending', record: { kind: 'vat', source: 'api', external_id: number }, replayed: [], requeued: false };
  const record = parseRecordKeyString(entry.record);
  const key = recordKeyString(record);
  const replayed: ReplayResult[] = [];
  for await (const letter of deps.deadLetters.all()) {
    if (letter.queue === QUEUE_NAMES.vatSubmissions && letter.record !== null && recordKeyString(letter.record) === key) {
      replayed.push(await replayEntry(deps, letter, actor));
    }
  }
  let requeued = false;
  if (replayed.length === 0) {
    // No dead letter (the job is waiting, or was lost): the newest version goes back to its job.
    await deps.records.reopen(record);
    requeued = await createRequeuer({ queues: deps.queues, records: deps.records, retry: deps.retry }).ensureQueued(record);
  }
  return { ok: true, from: decided.from, to: action === 'confirm' ? 'confirmed' : 'pending', record, replayed, requeued };
}

export function renderLedgerEntry(view: LedgerEntryView): string {
  const e = view.entry;
  const head = [
    `${e.invoice_number ?? '?'} · entity jurisdiction ${e.entity_jurisdiction ?? '?'} · ${e.state}${e.ambiguous ? ' (an attempt may have landed unheard)' : ''}`,
    `record ${e.record ?? '?'}${e.supplement_of ? ` · supplement of ${e.supplement_of}` : ''}`,
    `period ${e.reporting_period ?? '?'} · net ${e.net ?? '?'} vat ${e.vat ?? '?'} ${e.currency ?? ''} · body sha256 ${e.body_hash ?? '?'}`,
    `${e.attempts} attempt(s), ${e.resends} resend(s)${e.transaction_id ? ` · transaction ${e.transaction_id}` : ''}${e.code ? ` · ${e.code}` : ''}`,
    ...(e.attention ? [`ATTENTION: confirmed, but not reported as it is: ${e.attention} (check it in the VAT service; docs/operations.md)`] : []),
    ...(e.note ? [`note: ${e.note}`] : []),
  ];
  const lines = view.history.map((h) => `  ${h.at}  #${h.attempt}  ${h.outcome.padEnd(18)} ${(h.body_hash ?? '').slice(0, 12)}${h.note ? `  ${h.note}` : ''}`);
  return [...head, 'history:', ...lines].join('\n');
}
