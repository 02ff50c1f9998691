import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { createApiClients } from '../api/index.js';
import type { Config } from '../config/index.js';
import { Secret } from '../domain/secret.js';
import type { Settings } from '../config/settings.js';
import { CONNECTORS, secretsWithDev, sourceOf } from '../connectors/registry.js';
import type { RecordKey } from '../domain/record-key.js';
import { vatEnabled, type VatSettings } from '../mapping/index.js';
import type { RedisClient } from '../queue/connection.js';
import { createKeys } from '../queue/keys.js';
import { createRecordStore } from '../queue/record-state.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import { DEMO_CONNECTORS, buildDemoSamples, type DemoConnector, type DemoDelivery, type DemoExpectation, type DemoUpdate } from './samples.js';
import { lookUp, type DemoRecord } from './records.js';
import { filingHint, vatRecordSettled, vatRow, type DemoFilingHint, type DemoVatRow, type VatStateDeps } from './vat.js';

/**
 * `taxsync demo`: sends signed sample deliveries of every connector to a running daemon and
 * watches them arrive in its built-in emulator, on the tax engine's side and on the VAT
 * service's; then it sends an update of the VAT invoice and shows what became of it. It refuses
 * any daemon that does not say on /healthz that it sends to the built-in emulator: sample data
 * never reaches a real tax engine.
 */

export interface DemoOptions {
  /** The daemon's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The secret each connector signs with (the daemon's webhook secret for it). */
  secrets: Readonly<Record<DemoConnector, string>>;
  /** The source each connector's records carry (the daemon's settings). */
  sources: Readonly<Record<DemoConnector, string>>;
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

export interface DemoResult {
  ok: boolean;
  run: string;
  daemon: string;
  emulator: string;
  deliveries: { connector: DemoConnector; topic: string; status: number; accepted: number }[];
  records: DemoRecord[];
  /** The VAT side, when the daemon has VAT on: each sample invoice and refund, and each update. */
  vat: { enabled: boolean; rows: DemoVatRow[]; filing?: DemoFilingHint };
  /** One line naming what did not arrive; undefined when everything did. */
  reason?: string;
}

/** Thrown when the demo cannot run at all (no daemon, not the emulator, a delivery refused). */
export class DemoRefused extends Error {
  override readonly name = 'DemoRefused';
}

/** A connector's entry of `secrets` or `sources`; every connector with demo samples needs one. */
function given(map: Readonly<Record<DemoConnector, string>>, connector: DemoConnector, what: string): string {
  const value = map[connector];
  if (value === undefined) throw new DemoRefused(`no ${what} for connector ${connector}: the demo needs one for every connector with samples`);
  return value;
}

/** What the daemon signs with: the configured secret (the first during a rotation), else the development one. */
export function demoSecrets(config: Pick<Config, 'webhookSecrets'>): Record<DemoConnector, string> {
  // The daemon's own rule, with the development secrets `start` uses on the emulator.
  const secrets = secretsWithDev(config.webhookSecrets, true);
  return Object.fromEntries(DEMO_CONNECTORS.map((id) => [id, secrets[id]?.[0]?.reveal() ?? '']));
}

export function demoSources(settings: Settings): Record<DemoConnector, string> {
  return Object.fromEntries(DEMO_CONNECTORS.map((id) => [id, sourceOf(id, settings)]));
}

const Health = z.looseObject({
  status: z.string(),
  api: z.union([z.looseObject({ kind: z.string(), url: z.string().optional() }), z.string()]).optional(),
});

/** The emulator URL the daemon reports, or a refusal saying why the demo will not run against it. */
export async function emulatorOf(daemonUrl: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${daemonUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new DemoRefused(`no taxsync daemon answers at ${daemonUrl} (${why}): start one with \`taxsync start\`, or pass --url`);
  }
  const parsed = Health.safeParse(await response.json().catch(() => undefined));
  if (!response.ok || !parsed.success) {
    throw new DemoRefused(`${daemonUrl}/healthz answered ${response.status} without a taxsync health report: is this a taxsync daemon?`);
  }
  const api = parsed.data.api;
  // Daemons before this report said `"api": "built-in emulator"`, without the emulator's URL.
  const emulator = typeof api === 'string' ? /emulator/.test(api) : api?.kind === 'emulator';
  if (!emulator) {
    throw new DemoRefused(
      `the daemon at ${daemonUrl} sends to a configured tax engine (TAX_API_URL is set), not the built-in emulator: the demo never sends sample data to a real tax engine`,
    );
  }
  const url = typeof api === 'object' ? api.url : undefined;
  if (url === undefined) {
    throw new DemoRefused(
      `the daemon at ${daemonUrl} does not report the URL of its built-in emulator (is it \`taxsync serve\`, or an older version?): run the demo against \`taxsync start\` of this version with TAX_API_URL unset`,
    );
  }
  return url.replace(/\/+$/, '');
}

async function send(daemonUrl: string, delivery: DemoDelivery, secret: string, now: Date) {
  const raw = Buffer.from(JSON.stringify(delivery.body));
  const headers = { 'content-type': 'application/json', ...delivery.headers, ...CONNECTORS[delivery.connector]!.sign(raw, secret, now) };
  const what = `${delivery.connector} ${delivery.topic}`;
  let response: Response;
  try {
    response = await fetch(`${daemonUrl}/webhooks/${delivery.connector}`, { method: 'POST', body: raw, headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new DemoRefused(`${what}: the daemon at ${daemonUrl} did not answer (${(error as Error).message})`);
  }
  const text = await response.text();
  const body = (() => {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      return {};
    }
  })();
  if (response.status === 401) {
    const variable = CONNECTORS[delivery.connector]!.secretVariable;
    throw new DemoRefused(`${what}: the daemon refused the signature (401): set ${variable} to the secret the daemon uses, or leave it unset on both sides`);
  }
  if (response.status === 404) throw new DemoRefused(`${what}: the ${delivery.connector} connector is not enabled on the daemon (404)`);
  if (response.status !== 202) throw new DemoRefused(`${what}: the daemon answered ${response.status} ${text.slice(0, 200)}`);
  if (typeof body.dead_lettered === 'number' && body.dead_lettered > 0) {
    throw new DemoRefused(`${what}: the daemon dead-lettered the sample as INVALID_PAYLOAD (a taxsync bug: the samples should always parse)`);
  }
  return { connector: delivery.connector, topic: delivery.topic, status: response.status, accepted: typeof body.accepted === 'number' ? body.accepted : 0 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const names = (list: readonly { connector: string; record: string; external_id: string }[]) =>
  list.map((r) => `${r.connector} ${r.record} ${r.external_id}`).join(', ');

/** The samples whose VAT path the demo follows: every invoice and refund. */
type VatSample = { connector: DemoConnector; record: 'invoice' | 'refund'; source: string; external_id: string; change?: string; seq: number };

/** Runs the demo against a daemon; throws DemoRefused when it cannot, answers ok: false when records are missing. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const clock = options.clock ?? (() => new Date());
  const daemon = options.url.replace(/\/+$/, '');
  const emulator = await emulatorOf(daemon);
  // Loaded here, not at the top: only the demo needs the emulator's development credentials.
  const { DEFAULT_CLIENT } = await import('../emulator/index.js');
  const api = createApiClients({ taxUrl: emulator, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  const keys = createKeys(options.prefix);
  const state: VatStateDeps = {
    redis: options.redis,
    keys,
    records: createRecordStore(options.redis, keys),
    // Only read here (forRecord): the lease matters to writers alone.
    ledger: createVatLedger(options.redis, keys, { leaseMs: 60_000 }),
  };
  const vatOn = vatEnabled(options.vat);
  const deadlineMs = options.deadlineMs ?? 30_000;
  const poll = options.pollIntervalMs ?? 250;
  try {
    // Reach the emulator before sending anything: a daemon on another machine reports a loopback URL.
    try {
      await api.tax.customers.list({ limit: 1 });
    } catch (error) {
      throw new DemoRefused(`cannot read the emulator at ${emulator} that the daemon reports (${(error as Error).message}): run the demo on the daemon's machine`);
    }
    const secretOf = (c: DemoConnector) => given(options.secrets, c, 'secret');
    const source = (c: DemoConnector) => given(options.sources, c, 'source');
    const samples = buildDemoSamples({ run: options.run ?? String(randomInt(100_000_000, 1_000_000_000)), now: clock() });
    const deliveries = [];
    for (const delivery of samples.deliveries) {
      deliveries.push(await send(daemon, delivery, secretOf(delivery.connector), clock()));
    }
    options.onProgress?.(
      `sent ${deliveries.length} signed deliveries to ${daemon} (run ${samples.run}); waiting for ${samples.expected.length} records in the emulator at ${emulator}` +
        (vatOn ? ' and for their VAT outcome' : ''),
    );

    const vatSamples: VatSample[] = samples.expected.flatMap((e) =>
      e.record === 'invoice' || e.record === 'refund' ? [{ connector: e.connector, record: e.record, source: source(e.connector), external_id: e.external_id, seq: 1 }] : [],
    );
    const vatSettled = async (samplesToCheck: readonly VatSample[]) =>
      !vatOn || (await Promise.all(samplesToCheck.map((v) => vatRecordSettled(state, { kind: 'vat', source: v.source, external_id: v.external_id }, v.seq)))).every(Boolean);

    // Phase 1: every record in the tax engine, every VAT outcome known.
    const arrived = new Map<DemoExpectation, DemoRecord>();
    const invoiceIds = new Map<string, string>();
    let lastError: Error | undefined;
    const lookAll = async () => {
      for (const expected of samples.expected) {
        if (arrived.has(expected)) continue;
        try {
          const record = await lookUp(api, expected, source(expected.connector), invoiceIds);
          if (record) arrived.set(expected, record);
        } catch (error) {
          lastError = error as Error;
        }
      }
    };
    let until = Date.now() + deadlineMs;
    for (;;) {
      await lookAll();
      const phaseDone = arrived.size === samples.expected.length && (await vatSettled(vatSamples));
      if (phaseDone || Date.now() >= until) break;
      await sleep(poll);
    }
    const rows: DemoVatRow[] = [];
    if (vatOn) for (const v of vatSamples) rows.push(await vatRow({ ...state, emulatorUrl: emulator }, v, v.seq));

    // Phase 2: the updates, once what they update went through (else they would merge with it).
    const updated: { update: DemoUpdate; sample: VatSample; transactionSeq: number }[] = [];
    for (const update of samples.updates) {
      const key = (kind: RecordKey['kind']): RecordKey => ({ kind, source: source(update.connector), external_id: update.external_id });
      const [tx, vat] = await Promise.all([state.records.read(key('transaction')), state.records.read(key('vat'))]);
      deliveries.push(await send(daemon, update.delivery, secretOf(update.connector), clock()));
      updated.push({
        update,
        transactionSeq: tx.seq + 1,
        sample: { connector: update.connector, record: update.record, source: source(update.connector), external_id: update.external_id, change: update.change, seq: vat.seq + 1 },
      });
    }
    if (updated.length > 0) {
      options.onProgress?.(`sent ${updated.length} update(s): ${updated.map((u) => `${u.update.connector} ${u.update.record} ${u.update.external_id}: ${u.update.change}`).join('; ')}`);
      until = Date.now() + deadlineMs;
      for (;;) {
        const applied = await Promise.all(
          updated.map(async (u) => {
            const tx = await state.records.read({ kind: 'transaction', source: u.sample.source, external_id: u.sample.external_id });
            return tx.seq >= u.transactionSeq && tx.appliedSeq >= tx.seq;
          }),
        );
        if ((applied.every(Boolean) && (await vatSettled(updated.map((u) => u.sample)))) || Date.now() >= until) break;
        await sleep(poll);
      }
      // The tax engine's record as it is after the update.
      for (const u of updated) {
        const expected = samples.expected.find((e) => e.connector === u.update.connector && e.external_id === u.update.external_id);
        if (expected === undefined) continue;
        const record = await lookUp(api, expected, u.sample.source, invoiceIds).catch(() => undefined);
        if (record) arrived.set(expected, { ...record, detail: `updated: ${u.update.change}` });
      }
      if (vatOn) for (const u of updated) rows.push(await vatRow({ ...state, emulatorUrl: emulator }, u.sample, u.sample.seq));
    }

    const records = samples.expected.map(
      (expected): DemoRecord =>
        arrived.get(expected) ?? {
          connector: expected.connector,
          record: expected.record,
          source: source(expected.connector),
          external_id: expected.external_id,
          arrived: false,
        },
    );
    const accepted = rows.flatMap((r) => r.submissions.filter((s) => s.state === 'confirmed'));
    const filing = accepted[0] === undefined ? undefined : await filingHint(api.vat, options.vat, accepted[0]).catch(() => undefined);
    const reason = problemsOf(records, rows, vatOn, Math.round(deadlineMs / 1000), lastError);
    return {
      ok: reason === undefined,
      run: samples.run,
      daemon,
      emulator,
      deliveries,
      records,
      vat: { enabled: vatOn, rows, ...(filing ? { filing } : {}) },
      ...(reason ? { reason } : {}),
    };
  } finally {
    await api.close();
  }
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
    deadLettered.length === 0 ? undefined : `dead-lettered on the VAT path: ${deadLettered.map((r) => `${r.connector} ${r.record} ${r.external_id} (${r.code ?? '?'})`).join(', ')}`,
    doubled.length === 0 ? undefined : `VAT submissions the service received other than once: ${doubled.map((s) => `${s.invoice_number ?? '?'} (${s.received?.count})`).join(', ')}`,
    vatOn && rows.length > 0 && !rows.some((r) => r.submissions.some((s) => s.state === 'confirmed')) ? 'no sample became an accepted VAT submission' : undefined,
  ].filter((p): p is string => p !== undefined);
  return problems.length === 0 ? undefined : `${problems.join('; ')}; see \`taxsync trace <source> <external_id>\` and the daemon's log`;
}
