import { randomInt } from 'node:crypto';
import { createApiClients, type ApiClients } from '../api/index.js';
import { Secret } from '../domain/secret.js';
import type { RecordKey } from '../domain/record-key.js';
import { vatEnabled, type VatSettings } from '../mapping/index.js';
import type { RedisClient } from '../queue/connection.js';
import { createKeys } from '../queue/keys.js';
import { createRecordStore } from '../queue/record-state.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import { buildDemoSamples, type DemoConnection, type DemoDelivery, type DemoExpectation, type DemoSamples, type DemoUpdate } from './samples.js';
import { lookUp, type DemoRecord } from './records.js';
import { DemoRefused, emulatorOf, sendDelivery, type SentDelivery } from './send.js';
import { filingHint, vatRecordSettled, vatRow, type DemoFilingHint, type DemoVatRow, type VatStateDeps } from './vat.js';

/**
 * `taxsync demo`: sends signed sample deliveries to every connection of a running daemon that
 * takes webhooks (two WooCommerce shops at zero configuration: the same order to each) and
 * watches them arrive in its built-in emulator, on the tax engine's side and on the VAT
 * service's; then it sends an update of the VAT invoice and shows what became of it. It refuses
 * any daemon that does not say on /healthz that it sends to the built-in emulator: sample data
 * never reaches a real tax engine.
 */

export interface DemoOptions {
  /** The daemon's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The daemon's connections the demo sends to, each with the secret it signs with (demoConnections). */
  connections: readonly DemoConnection[];
  /** The daemon's Redis: each record's trace and VAT ledger are read there. */
  redis: RedisClient;
  /** The daemon's TAXSYNC_PREFIX. */
  prefix: string;
  /** The daemon's VAT settings; with VAT off nothing is expected on the VAT side. */
  vat: VatSettings;
  /** How long to wait for every record, from the last delivery (and again after the update). Default 30 s. */
  deadlineMs?: number;
  pollIntervalMs?: number;
  /** Digits that make this run's ids unique; default random. */
  run?: string;
  clock?: () => Date;
  /** Progress lines for people (not printed with --json). */
  onProgress?: (line: string) => void;
}

export type { DemoRecord } from './records.js';
export { DemoRefused, emulatorOf } from './send.js';
export { demoConnections, type DemoConnection } from './samples.js';

export interface DemoResult {
  ok: boolean;
  run: string;
  daemon: string;
  emulator: string;
  deliveries: SentDelivery[];
  records: DemoRecord[];
  /** The VAT side, when the daemon has VAT on: each sample invoice and refund, and each update. */
  vat: { enabled: boolean; rows: DemoVatRow[]; filing?: DemoFilingHint };
  /** One line naming what did not arrive; undefined when everything did. */
  reason?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const names = (list: readonly { connection: string; record: string; external_id: string }[]) =>
  list.map((r) => `${r.connection} ${r.record} ${r.external_id}`).join(', ');

/** The samples whose VAT path the demo follows: every invoice and refund. */
type VatSample = { connection: string; record: 'invoice' | 'refund'; source: string; external_id: string; platform_id: string; change?: string; seq: number };

/** One run's shared state: what it reads, and what it found so far. */
interface DemoRun {
  api: ApiClients;
  emulator: string;
  state: VatStateDeps;
  vat: VatSettings;
  vatOn: boolean;
  deadlineMs: number;
  poll: number;
  samples: DemoSamples;
  source(connection: string): string;
  arrived: Map<DemoExpectation, DemoRecord>;
  invoiceIds: Map<string, string>;
  rows: DemoVatRow[];
  lastError?: Error;
}

/** Polls `done` until it holds or `deadlineMs` passed. */
async function waitFor(run: DemoRun, done: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + run.deadlineMs;
  while (!(await done()) && Date.now() < until) await sleep(run.poll);
}

const vatSettled = async (run: DemoRun, samples: readonly VatSample[]) =>
  !run.vatOn || (await Promise.all(samples.map((v) => vatRecordSettled(run.state, { kind: 'vat', source: v.source, external_id: v.external_id }, v.seq)))).every(Boolean);

/** Phase 1: every record in the tax engine, every VAT outcome known. */
async function awaitRecords(run: DemoRun): Promise<void> {
  const vatSamples: VatSample[] = run.samples.expected.flatMap((e) =>
    e.record === 'invoice' || e.record === 'refund'
      ? [{ connection: e.connection, record: e.record, source: run.source(e.connection), external_id: e.external_id, platform_id: e.platform_id, seq: 1 }]
      : [],
  );
  const lookAll = async () => {
    for (const expected of run.samples.expected) {
      if (run.arrived.has(expected)) continue;
      try {
        const record = await lookUp(run.api, expected, run.source(expected.connection), run.invoiceIds);
        if (record) run.arrived.set(expected, record);
      } catch (error) {
        run.lastError = error as Error;
      }
    }
  };
  await waitFor(run, async () => {
    await lookAll();
    return run.arrived.size === run.samples.expected.length && (await vatSettled(run, vatSamples));
  });
  if (run.vatOn) for (const v of vatSamples) run.rows.push(await vatRow({ ...run.state, emulatorUrl: run.emulator }, v, v.seq));
}

/** Phase 2: the updates, once what they update went through (else they would merge with it). */
async function sendUpdates(run: DemoRun, send: (update: DemoUpdate) => Promise<void>, onProgress: DemoOptions['onProgress']): Promise<void> {
  const updated: { update: DemoUpdate; sample: VatSample; transactionSeq: number }[] = [];
  for (const update of run.samples.updates) {
    const source = run.source(update.connection);
    const key = (kind: RecordKey['kind']): RecordKey => ({ kind, source, external_id: update.external_id });
    const [tx, vat] = await Promise.all([run.state.records.read(key('transaction')), run.state.records.read(key('vat'))]);
    await send(update);
    const { connection, record, external_id, platform_id, change } = update;
    updated.push({ update, transactionSeq: tx.seq + 1, sample: { connection, record, source, external_id, platform_id, change, seq: vat.seq + 1 } });
  }
  if (updated.length === 0) return;
  onProgress?.(`sent ${updated.length} update(s): ${updated.map((u) => `${u.update.connection} ${u.update.record} ${u.update.external_id}: ${u.update.change}`).join('; ')}`);
  await waitFor(run, async () => {
    const applied = await Promise.all(
      updated.map(async (u) => {
        const tx = await run.state.records.read({ kind: 'transaction', source: u.sample.source, external_id: u.sample.external_id });
        return tx.seq >= u.transactionSeq && tx.appliedSeq >= tx.seq;
      }),
    );
    return applied.every(Boolean) && (await vatSettled(run, updated.map((u) => u.sample)));
  });
  // The tax engine's record as it is after the update.
  for (const u of updated) {
    const expected = run.samples.expected.find((e) => e.connection === u.update.connection && e.external_id === u.update.external_id);
    if (expected === undefined) continue;
    const record = await lookUp(run.api, expected, u.sample.source, run.invoiceIds).catch(() => undefined);
    if (record) run.arrived.set(expected, { ...record, detail: `updated: ${u.update.change}` });
  }
  if (run.vatOn) for (const u of updated) run.rows.push(await vatRow({ ...run.state, emulatorUrl: run.emulator }, u.sample, u.sample.seq));
}

/** Runs the demo against a daemon; throws DemoRefused when it cannot, answers ok: false when records are missing. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const clock = options.clock ?? (() => new Date());
  const daemon = options.url.replace(/\/+$/, '');
  if (options.connections.length === 0) {
    throw new DemoRefused('the configuration has no connection that takes webhooks on a platform with samples: nothing to send (docs/connections.md)');
  }
  const emulator = await emulatorOf(daemon);
  // Loaded here, not at the top: only the demo needs the emulator's development credentials.
  const { DEFAULT_CLIENT } = await import('../emulator/index.js');
  const api = createApiClients({ taxUrl: emulator, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  try {
    // Reach the emulator before sending anything: a daemon on another machine reports a loopback URL.
    try {
      await api.tax.customers.list({ limit: 1 });
    } catch (error) {
      throw new DemoRefused(`cannot read the emulator at ${emulator} that the daemon reports (${(error as Error).message}): run the demo on the daemon's machine`);
    }
    const byId = new Map(options.connections.map((c) => [c.id, c]));
    const run = startRun(options, api, emulator, buildDemoSamples({ run: options.run ?? String(randomInt(100_000_000, 1_000_000_000)), now: clock(), connections: options.connections }));
    const deliveries: SentDelivery[] = [];
    const send = async (delivery: DemoDelivery) => void deliveries.push(await sendDelivery(daemon, delivery, byId.get(delivery.connection)!, clock()));
    for (const delivery of run.samples.deliveries) await send(delivery);
    options.onProgress?.(
      `sent ${deliveries.length} signed deliveries to ${daemon} (run ${run.samples.run}: ${options.connections.map((c) => c.id).join(', ')}); waiting for ${run.samples.expected.length} records in the emulator at ${emulator}` +
        (run.vatOn ? ' and for their VAT outcome' : ''),
    );
    await awaitRecords(run);
    await sendUpdates(run, (update) => send(update.delivery), options.onProgress);
    return await resultOf(run, daemon, deliveries);
  } finally {
    await api.close();
  }
}

function startRun(options: DemoOptions, api: ApiClients, emulator: string, samples: DemoSamples): DemoRun {
  const keys = createKeys(options.prefix);
  const sources = new Map(options.connections.map((c) => [c.id, c.source]));
  return {
    api,
    emulator,
    state: {
      redis: options.redis,
      keys,
      records: createRecordStore(options.redis, keys),
      // Only read here (forRecord): the lease matters to writers alone.
      ledger: createVatLedger(options.redis, keys, { leaseMs: 60_000 }),
    },
    vat: options.vat,
    vatOn: vatEnabled(options.vat),
    deadlineMs: options.deadlineMs ?? 30_000,
    poll: options.pollIntervalMs ?? 250,
    samples,
    source: (connection) => sources.get(connection) ?? connection,
    arrived: new Map(),
    invoiceIds: new Map(),
    rows: [],
  };
}

async function resultOf(run: DemoRun, daemon: string, deliveries: SentDelivery[]): Promise<DemoResult> {
  const records = run.samples.expected.map(
    (expected): DemoRecord =>
      run.arrived.get(expected) ?? {
        connection: expected.connection,
        record: expected.record,
        source: run.source(expected.connection),
        external_id: expected.external_id,
        platform_id: expected.platform_id,
        arrived: false,
      },
  );
  const accepted = run.rows.flatMap((r) => r.submissions.filter((s) => s.state === 'confirmed'));
  const filing = accepted[0] === undefined ? undefined : await filingHint(run.api.vat, run.vat, accepted[0]).catch(() => undefined);
  const reason = problemsOf(records, run.rows, run.vatOn, Math.round(run.deadlineMs / 1000), run.lastError);
  return {
    ok: reason === undefined,
    run: run.samples.run,
    daemon,
    emulator: run.emulator,
    deliveries,
    records,
    vat: { enabled: run.vatOn, rows: run.rows, ...(filing ? { filing } : {}) },
    ...(reason ? { reason } : {}),
  };
}

/** What went wrong, in one line; undefined when the demo showed what it should. */
function problemsOf(records: DemoRecord[], rows: DemoVatRow[], vatOn: boolean, seconds: number, lastError: Error | undefined): string | undefined {
  const missing = records.filter((r) => !r.arrived);
  const unlinked = records.filter((r) => r.record === 'refund' && r.arrived && r.linked !== true);
  const unsettled = rows.filter((r) => !r.settled);
  const deadLettered = rows.filter((r) => r.outcome === 'dead letter');
  // Sent once: a submission the service received more than once (or never) breaks the promise.
  const doubled = rows.flatMap((r) => r.submissions).filter((s) => s.received !== undefined && s.received.count !== 1);
  const problems = [
    missing.length === 0
      ? undefined
      : `${missing.length} of ${records.length} records did not arrive in the emulator within ${seconds} s: ${names(missing)}` +
        (lastError ? ` (last error: ${lastError.message})` : ''),
    unlinked.length === 0 ? undefined : `refunds not linked to their invoice: ${names(unlinked)}`,
    unsettled.length === 0 ? undefined : `no VAT outcome within ${seconds} s for ${names(unsettled)}`,
    deadLettered.length === 0 ? undefined : `dead-lettered on the VAT path: ${deadLettered.map((r) => `${r.connection} ${r.record} ${r.external_id} (${r.code ?? '?'})`).join(', ')}`,
    doubled.length === 0 ? undefined : `VAT submissions the service received other than once: ${doubled.map((s) => `${s.invoice_number ?? '?'} (${s.received?.count})`).join(', ')}`,
    vatOn && rows.length > 0 && !rows.some((r) => r.submissions.some((s) => s.state === 'confirmed')) ? 'no sample became an accepted VAT submission' : undefined,
  ].filter((p): p is string => p !== undefined);
  return problems.length === 0 ? undefined : `${problems.join('; ')}; see \`taxsync trace <source> <external_id>\` and the daemon's log`;
}
