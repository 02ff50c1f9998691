import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { RedisClient } from '../../queue/connection.js';
import type { DeadLetterEntry } from '../../queue/dead-letter.js';
import { boot, type Booted } from '../../daemon/boot.js';
import {
  discardEntries,
  dlqStats,
  entriesById,
  exportEntries,
  listEntries,
  replayEntries,
  replayLeavesQueue,
  selectEntries,
  type DlqDeps,
  type ReplaySummary,
  type Selection,
} from '../../dead-letters/service.js';
import { describeTally, entryConnection, entrySubject, isEmptyFilter, matchesFilter, parseFilter, renderTable, tally, type DlqFilter, type DlqFilterOptions } from '../../dead-letters/filter.js';
import { editEntry } from '../../dead-letters/edit.js';
import { openDlq } from '../open-dlq.js';
import { applyRetention } from '../../dead-letters/retention.js';

interface Common extends DlqFilterOptions {
  json?: boolean;
  actor?: string;
}

/** Boots, opens Redis, runs `fn`, releases everything (errors then reach exitWith through main.ts). */
async function run(name: string, options: Common, fn: (deps: DlqDeps, booted: Booted, redis: RedisClient) => Promise<void>): Promise<void> {
  // Logs go to stderr: stdout is the answer (tables, --json, export lines).
  const booted = boot(`dlq ${name}`, { logToStderr: true });
  try {
    const opened = await openDlq(booted, options.actor ? { actor: options.actor } : {});
    try {
      await fn(opened.deps, booted, opened.redis);
    } finally {
      await opened.close();
    }
  } finally {
    await booted.lifecycle.shutdown(`dlq ${name} finished`);
  }
}

const int = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
  return n;
};

const CONNECTION_OPTION = ['--connection <id>', "only this connection's entries: its deliveries, its events and its records (taxsync config lists the connections)"] as const;

function filterOptions(command: Command): Command {
  return command
    .option('--queue <queue>', 'customers, transactions, vat-submissions or ingest')
    .option('--code <code>', 'error code, e.g. API_INVALID')
    .option('--source <source>', "the record's source (or the connector of an unreadable delivery)")
    .option('--external-id <id>', "the record's external id")
    .option('--since <iso>', 'last failure at or after (ISO 8601 date or date-time with zone)')
    .option('--until <iso>', 'last failure before (ISO 8601)')
    .option('--text <text>', 'text anywhere in the entry (case-insensitive)')
    .option(...CONNECTION_OPTION);
}

/**
 * The entries named by id, chosen by the filter, or (`--all`) every entry. With `explicit`
 * (replay, discard) nothing chosen is an error, never "all": an empty id or a blank filter is a
 * mistake, not a selection. Ids not found are an error.
 */
async function choose(deps: DlqDeps, ids: readonly string[], options: Common & { all?: boolean }, explicit: boolean): Promise<{ entries: DeadLetterEntry[]; selection: Selection }> {
  if (ids.some((id) => id.trim() === '')) throw new Error('an entry id is empty: name entry ids, give at least one filter, or --all');
  for (const name of ['queue', 'code', 'source', 'externalId', 'since', 'until', 'text', 'connection'] as const) {
    const value = options[name];
    if (value !== undefined && value.trim() === '') throw new Error(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is empty: give the filter a value, name entry ids, or --all`);
  }
  const filter = parseFilter(options, deps.connections);
  const criteria = (ids.length > 0 ? 1 : 0) + (isEmptyFilter(filter) ? 0 : 1) + (options.all ? 1 : 0);
  if (criteria > 1) throw new Error('give entry ids, filters or --all: one of them');
  if (ids.length > 0) {
    const { entries, missing } = await entriesById(deps, ids);
    if (missing.length > 0) throw new Error(`no dead-letter entry ${missing.join(', ')}`);
    return { entries, selection: { ids } };
  }
  if (explicit && criteria === 0) throw new Error('name entry ids, give at least one filter (--queue, --code, --source, --connection, …) or --all');
  return { entries: await selectEntries(deps, filter), selection: { filter } };
}

/** Asks on a terminal; without one, only --yes proceeds. */
async function confirmed(question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY || !process.stderr.isTTY) throw new Error('not a terminal: add --yes to proceed without a prompt');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function progress(done: number, total: number): void {
  if (!process.stderr.isTTY || total < 20) return;
  process.stderr.write(`\r${done}/${total} entries`);
  if (done === total) process.stderr.write('\n');
}

function renderEntry(e: DeadLetterEntry): string {
  const lines = [
    `entry ${e.id} (v${e.v})`,
    `  queue       ${e.queue}`,
    `  subject     ${entrySubject(e)}`,
    `  error       ${e.error.code}${e.error.retryable ? ' (retryable class)' : ''}: ${e.error.message}`,
  ];
  for (const [field, messages] of Object.entries(e.error.fields ?? {})) lines.push(`    ${field}: ${messages.join('; ')}`);
  lines.push(`  attempts    ${e.attempts}`, `  first fail  ${e.first_failed_at}`, `  last fail   ${e.last_failed_at}`);
  if (e.edited) lines.push(`  edited      ${e.edited.count}× (last ${e.edited.at} by ${e.edited.actor}); the original is kept (--json: ${e.raw ? 'raw_body_original' : 'event_original'})`);
  if (e.event !== null) lines.push(`  event${e.edited && !e.raw ? ' (edited)' : ''}`, ...JSON.stringify(e.event, null, 2).split('\n').map((l) => `    ${l}`));
  if (e.http) {
    lines.push(`  request     ${e.http.request.method} ${e.http.request.url}`);
    if (e.http.request.body !== undefined) lines.push(`    ${e.http.request.body}`);
    if (e.http.response) {
      lines.push(`  response    ${e.http.response.status}`);
      for (const [name, value] of Object.entries(e.http.response.headers ?? {})) lines.push(`    ${name}: ${value}`);
      if (e.http.response.body !== undefined) lines.push(`    ${e.http.response.body}`);
    }
  }
  if (e.raw) {
    const r = e.raw;
    lines.push(
      `  delivery    ${r.connector}${r.topic ? ` ${r.topic}` : ''}${r.delivery_id ? ` id ${r.delivery_id}` : ''}${r.content_type ? ` (${r.content_type})` : ''}, received ${r.received_at}`,
      `  raw body${r.body_truncated ? ' (truncated)' : ''}`,
      `    ${r.body}`,
    );
  }
  return lines.join('\n');
}

/** `--connection` alone (stats, prune): an unknown id is an error naming the connections there are. */
function connectionFilter(deps: DlqDeps, id: string): DlqFilter {
  if (id.trim() === '') throw new Error('--connection is empty: name a connection');
  return parseFilter({ connection: id }, deps.connections);
}

/**
 * The dead letters as retention sees them, narrowed to one connection's entries: retention then
 * archives and removes only those (never more than a prune of the whole queue would of them).
 */
function connectionEntries(deps: DlqDeps, id: string): Pick<DlqDeps['deadLetters'], 'all' | 'removeTo'> {
  const filter = connectionFilter(deps, id);
  return {
    async *all(pageSize?: number) {
      for await (const entry of deps.deadLetters.all(pageSize)) if (matchesFilter(entry, filter)) yield entry;
    },
    removeTo: (multi, entryId) => deps.deadLetters.removeTo(multi, entryId),
  };
}

function renderReplay(summary: ReplaySummary): string {
  const counts = Object.entries(summary.counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  const lines = summary.results.map((r) => `  ${r.id}  ${r.outcome}${replayLeavesQueue(r.outcome) ? '' : ' (kept)'}: ${r.detail}`);
  return [counts || 'nothing replayed', ...lines].join('\n');
}

/** Reading the queue: list, stats, show, export. */
function registerReviewCommands(dlq: Command): void {
  filterOptions(dlq.command('list').description('entries, newest first'))
    .option('--limit <n>', 'at most this many (default 50)', int('limit'), 50)
    .option('--offset <n>', 'skip this many', int('offset'), 0)
    .option('--json', 'machine-readable output')
    .action(async (options: Common & { limit: number; offset: number }) => {
      await run('list', options, async (deps) => {
        const page = await listEntries(deps, parseFilter(options, deps.connections), { offset: options.offset, limit: options.limit });
        const connectionOf = (e: DeadLetterEntry) => entryConnection(e, deps.connections) ?? null;
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ ...page, entries: page.entries.map((e) => ({ ...e, connection: connectionOf(e) })) })}\n`);
          return;
        }
        const rows = page.entries.map((e) => [e.id, e.last_failed_at, e.queue, e.error.code, connectionOf(e) ?? '-', entrySubject(e), e.error.message.slice(0, 80)]);
        process.stdout.write(`${renderTable(['ID', 'LAST FAILED', 'QUEUE', 'CODE', 'CONNECTION', 'SUBJECT', 'MESSAGE'], rows)}\n`);
        process.stdout.write(`${page.entries.length} of ${page.total} shown${page.offset > 0 ? ` (from ${page.offset})` : ''}\n`);
      });
    });

  dlq
    .command('stats')
    .description('entry counts by queue and error code')
    .option(...CONNECTION_OPTION)
    .option('--json', 'machine-readable output')
    .action(async (options: Common) => {
      await run('stats', options, async (deps) => {
        const stats = options.connection === undefined ? await dlqStats(deps) : tally(await selectEntries(deps, connectionFilter(deps, options.connection)));
        if (options.json) {
          process.stdout.write(`${JSON.stringify(stats)}\n`);
          return;
        }
        const rows = (counts: Record<string, number>) => Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => [k, String(n)]);
        process.stdout.write(`${stats.total} entries\n\n${renderTable(['QUEUE', 'ENTRIES'], rows(stats.by_queue))}\n\n${renderTable(['CODE', 'ENTRIES'], rows(stats.by_code))}\n`);
      });
    });

  dlq
    .command('show')
    .argument('<id>', 'entry id')
    .description('one entry: error and field errors, HTTP exchange, attempts, times, event or raw delivery')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: Common) => {
      await run('show', options, async (deps) => {
        const entry = await deps.deadLetters.get(id);
        if (!entry) throw new Error(`no dead-letter entry ${id}`);
        process.stdout.write(options.json ? `${JSON.stringify(entry)}\n` : `${renderEntry(entry)}\n`);
      });
    });

  filterOptions(dlq.command('export').description('entries as JSON lines on stdout (audited)'))
    .argument('[ids...]', 'entry ids (default: every entry the filters match)')
    .option('--actor <name>', 'who is acting, for the audit log (default: the OS user)')
    .action(async (ids: string[], options: Common) => {
      await run('export', options, async (deps) => {
        const { entries, selection } = await choose(deps, ids, options, false);
        const count = await exportEntries(deps, entries, selection, (line) => process.stdout.write(line));
        process.stderr.write(`${count} entries exported\n`);
      });
    });
}

/** Acting on entries: discard, replay, edit (each audited). */
function registerActionCommands(dlq: Command): void {
  filterOptions(dlq.command('discard').description('remove entries for good (plan first; audited)'))
    .argument('[ids...]', 'entry ids (or filters, or --all)')
    .option('--all', 'every entry (an explicit choice: no ids and no filter is an error)')
    .option('--yes', 'do not ask (required when not on a terminal)')
    .option('--actor <name>', 'who is acting, for the audit log (default: the OS user)')
    .option('--json', 'machine-readable output')
    .action(async (ids: string[], options: Common & { yes?: boolean; all?: boolean }) => {
      await run('discard', options, async (deps) => {
        const { entries, selection } = await choose(deps, ids, options, true);
        const plan = tally(entries);
        if (!options.json) process.stderr.write(`plan: discard ${describeTally(plan)}\n`);
        if (entries.length === 0 || !(await confirmed(`Discard ${entries.length} entries?`, options.yes))) {
          if (options.json) process.stdout.write(`${JSON.stringify({ plan, discarded: 0 })}\n`);
          else process.stdout.write('nothing discarded\n');
          return;
        }
        const discarded = await discardEntries(deps, entries, selection);
        process.stdout.write(options.json ? `${JSON.stringify({ plan, discarded })}\n` : `${discarded} entries discarded\n`);
      });
    });

  filterOptions(dlq.command('replay').description('send entries again, safely (plan first; audited); see docs/operations.md'))
    .argument('[ids...]', 'entry ids (or filters, or --all)')
    .option('--all', 'every entry (an explicit choice: no ids and no filter is an error, except with --dry-run)')
    .option('--yes', 'do not ask (required when not on a terminal)')
    .option('--dry-run', 'print the plan only')
    .option('--remap', "rebuild each job from the record's latest known state instead of the entry's event (worker entries only)")
    .option('--actor <name>', 'who is acting, for the audit log (default: the OS user)')
    .option('--json', 'machine-readable output')
    .action(async (ids: string[], options: Common & { yes?: boolean; dryRun?: boolean; remap?: boolean; all?: boolean }) => {
      await run('replay', options, async (deps) => {
        // A dry run changes nothing: its plan may cover everything.
        const { entries, selection } = await choose(deps, ids, options, !options.dryRun);
        const plan = tally(entries);
        if (options.dryRun || entries.length === 0) {
          process.stdout.write(options.json ? `${JSON.stringify({ plan, dry_run: true })}\n` : `plan: replay${options.remap ? ' --remap' : ''} ${describeTally(plan)}\n`);
          return;
        }
        if (!options.json) process.stderr.write(`plan: replay ${describeTally(plan)}\n`);
        if (!(await confirmed(`Replay ${entries.length} entries?`, options.yes))) {
          process.stdout.write(options.json ? `${JSON.stringify({ plan, replayed: false })}\n` : 'nothing replayed\n');
          return;
        }
        const actor = deps.audit.actor;
        const summary = await replayEntries(deps, entries, { actor, selection, remap: options.remap ?? false, onProgress: progress });
        process.stdout.write(options.json ? `${JSON.stringify({ plan, ...summary })}\n` : `${renderReplay(summary)}\n`);
        if (summary.counts['still-invalid'] + summary.counts.skipped > 0) process.exitCode = 2;
      });
    });

  dlq
    .command('edit')
    .argument('<id>', 'entry id')
    .description("apply a JSON merge patch (RFC 7396) to an entry's event (or a kept JSON delivery's body); validated, audited; replay sends the edit")
    .requiredOption('--patch <file>', 'the merge patch, a JSON object (- reads stdin)')
    .option('--actor <name>', 'who is acting, for the audit log (default: the OS user)')
    .option('--json', 'machine-readable output (the saved entry)')
    .action(async (id: string, options: Common & { patch: string }) => {
      const text = options.patch === '-' ? await readStdin() : await readFile(options.patch, 'utf8');
      let patch: unknown;
      try {
        patch = JSON.parse(text);
      } catch (error) {
        throw new Error(`--patch ${options.patch} is not valid JSON: ${(error as Error).message}`);
      }
      await run('edit', options, async (deps) => {
        const plan = await editEntry(deps, id, patch, deps.audit.actor);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(plan.entry)}\n`);
          return;
        }
        process.stdout.write(`entry ${id}: edited ${plan.target} (${plan.paths.join(', ')}); the original is kept. Send it with: taxsync dlq replay ${id}\n`);
      });
    });
}

/** Keeping the queue: retention once, and the audit log. */
function registerUpkeepCommands(dlq: Command): void {
  dlq
    .command('prune')
    .description('apply retention once (TAXSYNC_DLQ_MAX_ENTRIES, TAXSYNC_DLQ_MAX_AGE_DAYS): archive, then remove; off by default')
    .option('--connection <id>', "only this connection's entries: the age limit applies to them, and the cap counts only them")
    .option('--json', 'machine-readable output')
    .action(async (options: Common) => {
      await run('prune', options, async (deps, booted, redis) => {
        const { maxEntries, maxAgeDays, archivePath } = booted.config.deadLetter;
        const result = await applyRetention(
          { deadLetters: options.connection === undefined ? deps.deadLetters : connectionEntries(deps, options.connection), redis, keys: deps.keys, logger: booted.logger, ...(deps.clock ? { clock: deps.clock } : {}) },
          { maxEntries, maxAgeDays },
          archivePath,
        );
        if (result.busy) throw new Error('another process (a worker, or another prune) is applying retention right now; nothing done, try again shortly');
        if (options.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
          return;
        }
        const off = maxEntries <= 0 && maxAgeDays <= 0 ? ' (retention is off: TAXSYNC_DLQ_MAX_ENTRIES and TAXSYNC_DLQ_MAX_AGE_DAYS are 0)' : '';
        const of = options.connection === undefined ? '' : ` of connection ${options.connection}`;
        process.stdout.write(`${result.removed} entries${of} archived to ${archivePath} and removed (${result.byAge} by age, ${result.byCap} over the cap); ${result.kept} kept${off}\n`);
      });
    });

  dlq
    .command('audit')
    .description('who replayed, discarded or exported what, newest first')
    .option('--limit <n>', 'at most this many (default 50)', int('limit'), 50)
    .option('--json', 'machine-readable output')
    .action(async (options: Common & { limit: number }) => {
      await run('audit', options, async (deps) => {
        const entries = await deps.audit.list(options.limit);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(entries)}\n`);
          return;
        }
        const which = (e: (typeof entries)[number]) =>
          e.ids ? e.ids.join(' ') : e.filter && Object.keys(e.filter).length > 0 ? Object.entries(e.filter).map(([k, v]) => `--${k.replace('_', '-')} ${v}`).join(' ') : '(all)';
        const rows = entries.map((e) => [e.at, e.actor, e.action, String(e.count), which(e), e.outcome]);
        process.stdout.write(`${renderTable(['AT', 'ACTOR', 'ACTION', 'COUNT', 'ENTRIES', 'OUTCOME'], rows)}\n`);
      });
    });
}

export function registerDlqCommands(program: Command): void {
  const dlq = program.command('dlq').description('review the dead-letter queue: list, show, edit, replay, discard, export, prune, audit');
  registerReviewCommands(dlq);
  registerActionCommands(dlq);
  registerUpkeepCommands(dlq);
}
