import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { createRedis, whenReady, closeQueues, createQueues, type RedisClient } from '../../queue/connection.js';
import { createKeys } from '../../queue/keys.js';
import { createRecordStore } from '../../queue/record-state.js';
import { createRefundLedger } from '../../queue/refund-ledger.js';
import { createAuditLog } from '../../queue/audit.js';
import { createVatLedger } from '../../queue/vat-ledger.js';
import { replayFindings, type ReplayedFinding } from '../../reconcile/replay.js';
import { ReportFile, renderReport, type Report } from '../../reconcile/report.js';
import { runReconcile, type ReconcileOptions } from '../../reconcile/run.js';
import { reconcileConnection } from '../../reconcile/scope.js';
import { namedConnection } from '../connection-option.js';
import { parseSince } from '../../reconcile/since.js';
import { boot, type Booted } from '../../daemon/boot.js';
import { clientApi, clientRedis } from '../../daemon/find-daemon.js';
import { reconcileVat } from '../../vat-ops/commands.js';
import { EMULATOR_BOX_LAYOUT, renderReconcile } from '../../vat-ops/reconcile.js';
import { createProgress } from '../progress.js';
import { describeIssues } from '../../domain/field-errors.js';

interface ReconcileFlags {
  since?: string;
  source?: string[];
  connection?: string;
  json?: boolean;
  fresh?: boolean;
  replay?: boolean;
  period?: string;
  filing?: string;
  actor?: string;
}

/** Redis for one command run (REDIS_URL, else the daemon's), closed on shutdown. */
async function redisFor(booted: Booted): Promise<RedisClient> {
  const redis = createRedis(await clientRedis(booted), 'producer');
  await whenReady(redis).catch((error: unknown) => {
    redis.disconnect();
    throw error;
  });
  booted.lifecycle.onShutdown('redis', async () => {
    redis.disconnect();
    await Promise.resolve();
  });
  return redis;
}

async function replay(booted: Booted, redis: RedisClient, report: { run_id: string; findings: Report['findings'] }, actor: string): Promise<ReplayedFinding[]> {
  const { config } = booted;
  const keys = createKeys(config.redis.prefix);
  const queues = createQueues(redis, config.redis.prefix);
  try {
    return await replayFindings({ queues, keys, audit: createAuditLog(redis, keys, { actor }), trace: config.trace, retry: config.queue.retry }, report);
  } finally {
    await closeQueues(queues);
  }
}

const renderReplayed = (results: ReplayedFinding[]) =>
  results.length === 0 ? 'nothing to replay' : results.map((r) => `${r.outcome.padEnd(7)} ${r.finding.kind.padEnd(9)} ${r.detail}`).join('\n');

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

/** Which records the run compares: a connection's (its source, the ids that are its), or sources. */
function scopeOf(booted: Booted, options: ReconcileFlags): Pick<ReconcileOptions, 'sources' | 'connection'> {
  if (options.connection === undefined) return options.source ? { sources: options.source } : {};
  // A connection is narrower than its source: both given would say two different things.
  if (options.source !== undefined) throw new Error('--connection and --source: give one (a connection compares only its own records of its source)');
  return { connection: reconcileConnection(booted.connections, namedConnection(booted.connections, options.connection)) };
}

/** `taxsync reconcile`: one run over the records the options select, its report, and with --replay its mismatches queued again. */
async function reconcileCommand(options: ReconcileFlags): Promise<void> {
  const booted = boot('reconcile', { logToStderr: true });
  const progress = createProgress();
  try {
    const { config, settings } = booted;
    const since = options.since === undefined ? undefined : parseSince(options.since, new Date());
    if (options.filing !== undefined && options.period === undefined) throw new Error('--filing needs --period');
    const scope = scopeOf(booted, options);
    const redis = await redisFor(booted);
    const keys = createKeys(config.redis.prefix);
    const api = await clientApi(booted);
    const report = await runReconcile(
      {
        redis,
        keys,
        records: createRecordStore(redis, keys),
        refunds: createRefundLedger(redis, keys),
        tax: api.tax,
        settings: settings.mapping,
        onProgress: (phase, done) => progress.update(`reconcile: ${phase}`, done),
        ...(options.period === undefined
          ? {}
          : {
              vat: () =>
                reconcileVat(
                  { ledger: createVatLedger(redis, keys, { leaseMs: config.queue.vat.leaseMs }), vat: api.vat },
                  { period: options.period!, layout: EMULATOR_BOX_LAYOUT, ...(options.filing === undefined ? {} : { filingId: options.filing }) },
                ),
            }),
      },
      { ...(since ? { since } : {}), ...scope, fresh: options.fresh === true },
    );
    progress.stop();
    const replayed = options.replay ? await replay(booted, redis, report, options.actor ?? userInfo().username) : undefined;
    if (options.json) process.stdout.write(`${JSON.stringify(replayed ? { report, replayed } : report)}\n`);
    else process.stdout.write(`${renderReport(report, renderReconcile)}${replayed ? `\n${renderReplayed(replayed)}` : ''}\n`);
    if (!report.matches && !options.replay) process.exitCode = 2;
  } finally {
    progress.stop();
    await booted.lifecycle.shutdown('reconcile finished');
  }
}

export function registerReconcileCommands(program: Command): void {
  const reconcile = program
    .command('reconcile')
    .description("taxsync's latest state of each record against the tax engine's transaction and customer lists (missing, extra, differing), with the VAT ledger against a filing (--period); exit 2 when they differ")
    .option('--since <when>', 'only records changed since: a date, a date-time with zone, or an age (6h, 7d)')
    .option('--source <source>', 'only this source (repeat or comma-separate for several)', collect)
    .option('--connection <id>', "only this connection's records (its source, the external ids with its prefix), on both sides: another shop of the same source is neither missing nor extra")
    .option('--period <period>', 'add the VAT part: the ledger of this period (YYYY-MM or YYYY-Qn), as `taxsync vat reconcile`')
    .option('--filing <id>', 'with --period: the filing whose draft return boxes the ledger is compared with')
    .option('--fresh', 'start over, ignoring the checkpoint of an interrupted run with the same options')
    .option('--replay', 'after the report, queue every mismatch again from its latest state')
    .option('--actor <name>', 'who replays, for the trace (default: the OS user)')
    .option('--json', 'machine-readable output (the report; with --replay: {report, replayed})')
    .action(reconcileCommand);

  reconcile
    .command('replay')
    .argument('<report>', 'a report written by `taxsync reconcile --json` (- reads stdin)')
    .description('queue every mismatch of a report again, re-mapped from the latest state (records taxsync holds nothing of are listed, not touched)')
    .option('--actor <name>', 'who replays, for the trace (default: the OS user)')
    .option('--json', 'machine-readable output')
    .action(async (file: string, _own: { actor?: string; json?: boolean }, command: Command) => {
      // `reconcile` has --json and --actor too: commander gives them to it when written after `replay`.
      const options = command.optsWithGlobals<{ actor?: string; json?: boolean }>();
      const text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw new Error(`${file} is not JSON: write the report with \`taxsync reconcile --json > report.json\``);
      }
      // `reconcile --replay --json` writes {report, replayed}: its report is read as well.
      const parsed = ReportFile.safeParse(typeof raw === 'object' && raw !== null && 'report' in raw ? (raw).report : raw);
      if (!parsed.success) throw new Error(`${file} is not a reconcile report (${describeIssues(parsed.error.issues, { whole: '(report)', limit: 3 })})`);
      const booted = boot('reconcile replay', { logToStderr: true });
      try {
        const redis = await redisFor(booted);
        const results = await replay(booted, redis, parsed.data, options.actor ?? userInfo().username);
        process.stdout.write(`${options.json ? JSON.stringify(results) : renderReplayed(results)}\n`);
      } finally {
        await booted.lifecycle.shutdown('reconcile replay finished');
      }
    });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
