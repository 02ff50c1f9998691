import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../src/domain/record-key.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { VatSettings, type VatSettingsInput } from '../../src/mapping/vat-settings.js';
import { createLogger } from '../../src/observability/logger.js';
import { createRecordProcessor } from '../../src/processors/record-processor.js';
import { createVatHandler, createVatReferenceData, type VatHandlerDeps } from '../../src/processors/vat.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore, type DeadLetterEntry, type DeadLetterStore } from '../../src/queue/dead-letter.js';
import { RECORD_JOB_VERSION } from '../../src/queue/jobs.js';
import { createKeys, type Keys } from '../../src/queue/keys.js';
import type { QueueName } from '../../src/queue/names.js';
import { createProducer, type Producer } from '../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../src/queue/record-state.js';
import { createRequeuer } from '../../src/queue/requeue.js';
import { createVatLedger, type VatLedger } from '../../src/queue/vat-ledger.js';

/** The seller of every VAT rig: one German domestic registration in the emulator. */
export const RIG_ENTITY = '11111111-2222-4333-8444-555555555555';

/** What one run of the record processor for a record ended in (a thrown retry or delay included). */
export type RunResult =
  | { kind: 'applied' | 'nothing-new' | 'dead-lettered' | 'taken-over' }
  | { kind: 'delayed'; until: number }
  | { kind: 'retry'; code: string; message: string };

export interface VatRig {
  emulator: Emulator & { url: string };
  api: ApiClients;
  redis: Redis;
  keys: Keys;
  records: RecordStore;
  ledger: VatLedger;
  deadLetters: DeadLetterStore;
  producer: Producer;
  queues: Record<QueueName, Queue>;
  settings: VatSettings;
  /** The business clock of taxsync's side (handler, ledger, processor): moved by the test only. */
  now(): number;
  advance(ms: number): void;
  /** A VAT handler on the rig's ledger, clock and records, with `overrides` (another client, say). */
  handler(overrides?: Partial<VatHandlerDeps>): ReturnType<typeof createVatHandler>;
  /** Stores events as the webhook path does (latest state + the vat-submissions record). */
  accept(...events: CanonicalEventInput[]): Promise<void>;
  /** One run of the record processor for the record's vat-submissions job, on a job of its own. */
  run(record: RecordKey, handler?: ReturnType<typeof createVatHandler>): Promise<RunResult>;
  /** Runs until applied, dead-lettered or nothing new (moving the clock over delays), at most `max` runs. */
  settle(record: RecordKey, max?: number): Promise<RunResult>;
  deadLettersOf(record: RecordKey): Promise<DeadLetterEntry[]>;
  /** The VAT transactions the emulator accepted, by invoice number. */
  accepted(): Map<string, { net: string; vat: string; gross: string; count: number }>;
  close(): Promise<void>;
}

export const vatRecord = (externalId: string, source = 'api'): RecordKey => ({ kind: 'vat', source, external_id: externalId });

/** A German domestic B2B invoice (ERP wire form); `lines` are [unit price, VAT fraction]. */
export function invoiceEvent(
  externalId: string,
  version: number,
  lines: readonly (readonly [string, string])[],
  overrides: { number?: string; status?: 'active' | 'paid' | 'cancelled'; source?: string; type?: 'invoice.upserted' | 'invoice.cancelled' } = {},
): CanonicalEventInput {
  return {
    id: `${externalId}-v${version}`,
    type: overrides.type ?? 'invoice.upserted',
    occurred_at: new Date(Date.UTC(2025, 2, 2, 10, 0, version)).toISOString(),
    connector: 'erp',
    record: { kind: 'transaction', source: overrides.source ?? 'api', external_id: externalId },
    data: {
      number: overrides.number ?? externalId,
      issued_at: '2025-03-02T10:00:00+01:00',
      status: overrides.status ?? 'active',
      currency: 'EUR',
      tax_inclusive: false,
      customer: { external_id: 'C-1', name: 'Acme GmbH', tax_number: 'DE123456789' },
      addresses: { billing: { city: 'Berlin', zip: '10115', country: 'DE' } },
      lines: lines.map(([unit_price, tax_rate], i) => ({ sku: `SKU-${i}`, unit_price, quantity: '1', tax_rate })),
    },
  };
}

export function deletedEvent(externalId: string, version: number): CanonicalEventInput {
  return {
    id: `${externalId}-v${version}-deleted`,
    type: 'invoice.deleted',
    occurred_at: new Date(Date.UTC(2025, 2, 2, 10, 0, version)).toISOString(),
    connector: 'erp',
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: {},
  };
}

export function refundEvent(externalId: string, invoiceId: string, amount: string, tax: string, version = 1): CanonicalEventInput {
  return {
    id: `${externalId}-v${version}`,
    type: 'refund.created',
    occurred_at: new Date(Date.UTC(2025, 2, 3, 10, 0, version)).toISOString(),
    connector: 'erp',
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: { invoice_external_id: invoiceId, issued_at: '2025-03-03T10:00:00Z', currency: 'EUR', amount, tax_amount: tax },
  };
}

/**
 * Redis (the test's prefix), the emulator on port 0 with a German registration, and taxsync's VAT
 * side driven directly: no BullMQ worker, no timed retries; the record processor runs on a job
 * object of the test's own and the clock moves only when the test says.
 */
export async function createVatRig(options: {
  url: string;
  prefix: string;
  settings?: Partial<VatSettingsInput>;
  leaseMs?: number;
  unknownLimit?: number;
  /** Attempts of a job before a retryable failure is dead-lettered. @defaultValue 1000 */
  attempts?: number;
  /**
   * The emulator of another rig (its German registration already made), left open by close():
   * a second rig on another Redis (after a failover) talks to the same service.
   */
  emulator?: Emulator & { url: string };
}): Promise<VatRig> {
  const own = options.emulator === undefined;
  const emulator = options.emulator ?? (await startEmulator({ port: 0, host: '127.0.0.1', entities: [{ id: RIG_ENTITY, name: 'Beta GmbH' }] }));
  const api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  if (own) await api.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: RIG_ENTITY, registration_type: 'standard', date_of_registration: '2024-01-01' });
  const redis = createRedis(options.url, 'producer');
  await new Promise((resolve) => redis.once('ready', resolve));
  const keys = createKeys(options.prefix);
  const queues = createQueues(redis, options.prefix);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  const records = createRecordStore(redis, keys);
  const start = Date.parse('2025-03-15T12:00:00Z');
  let now = start;
  const clock = () => new Date(now);
  const producer = createProducer({
    queues,
    connection: redis,
    keys,
    deadLetters,
    trace: { maxEntries: 50, maxAgeMs: 600_000 },
    deliveryTtlMs: 60_000,
    coalesceDelayMs: 0,
    vat: true,
    clock,
  });
  const settings = VatSettings.parse({
    seller_country: 'DE',
    registrations: [{ taxable_jurisdiction: 'DE' }],
    rates: { DE: { standard: '19.00', reduced: ['7.00'] } },
    ...options.settings,
  });
  // Leases are decided on Redis's clock: moved as far as the test moved its own.
  const ledger = createVatLedger(redis, keys, { leaseMs: options.leaseMs ?? 60_000, clock, timeShift: () => now - start });
  const reference = createVatReferenceData(api.vat, settings, { ttlMs: 3_600_000 });
  const requeuer = createRequeuer({ queues, records });
  const makeHandler = (overrides: Partial<VatHandlerDeps> = {}) =>
    createVatHandler({
      vat: api.vat,
      ledger,
      settings,
      reference,
      records,
      clock,
      requeue: async (record: RecordKey) => {
        await records.reopen(record);
        await requeuer.ensureQueued(record);
      },
      ...(options.unknownLimit === undefined ? {} : { unknownLimit: options.unknownLimit }),
      ...overrides,
    });
  const defaultHandler = makeHandler();
  const logger = createLogger({ level: 'silent' });
  const processorFor = (handler: ReturnType<typeof createVatHandler>) =>
    createRecordProcessor({
      queue: queues['vat-submissions'],
      handler,
      records,
      deadLetters,
      redis,
      keys,
      trace: { maxEntries: 50, maxAgeMs: 600_000 },
      logger,
      wait: { deadlineMs: 7 * 86_400_000, baseMs: 1_000, capMs: 60_000 },
      clock,
      random: () => 0.5,
    });
  const processors = new Map<ReturnType<typeof createVatHandler>, ReturnType<typeof processorFor>>();
  const attempts = new Map<string, number>();

  async function run(record: RecordKey, handler = defaultHandler): Promise<RunResult> {
    let processor = processors.get(handler);
    if (processor === undefined) processors.set(handler, (processor = processorFor(handler)));
    const id = recordKeyString(record);
    let until: number | undefined;
    const job = {
      id,
      data: { v: RECORD_JOB_VERSION, record },
      attemptsMade: attempts.get(id) ?? 0,
      opts: { attempts: options.attempts ?? 1_000 },
      moveToDelayed: (at: number) => {
        until = at;
        return Promise.resolve();
      },
    } as unknown as Job;
    try {
      const result = await processor(job, 'token');
      attempts.delete(id);
      return { kind: result };
    } catch (error) {
      if (until !== undefined) return { kind: 'delayed', until };
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      const e = error as { code?: string; message?: string; name?: string };
      return { kind: 'retry', code: e.code ?? e.name ?? 'unknown', message: e.message ?? String(error) };
    }
  }

  return {
    emulator,
    api,
    redis,
    keys,
    records,
    ledger,
    deadLetters,
    producer,
    queues,
    settings,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    handler: makeHandler,
    async accept(...events) {
      await producer.accept({ events: events.map((e) => CanonicalEvent.parse(e)) });
    },
    run,
    async settle(record, max = 50) {
      let last: RunResult = { kind: 'nothing-new' };
      for (let i = 0; i < max; i++) {
        last = await run(record);
        if (last.kind === 'delayed') now = Math.max(now, last.until);
        else if (last.kind === 'retry') now += 60_000;
        else return last;
      }
      return last;
    },
    async deadLettersOf(record) {
      const out: DeadLetterEntry[] = [];
      for await (const entry of deadLetters.all()) {
        if (entry.record && recordKeyString(entry.record) === recordKeyString(record)) out.push(entry);
      }
      return out;
    },
    accepted() {
      const out = new Map<string, { net: string; vat: string; gross: string; count: number }>();
      for (const { value } of emulator.state.vatTransactions.live()) {
        const seen = out.get(value.invoice_number);
        out.set(value.invoice_number, { net: value.net, vat: value.vat, gross: value.gross, count: (seen?.count ?? 0) + 1 });
      }
      return out;
    },
    async close() {
      await closeQueues(queues);
      redis.disconnect();
      await api.close();
      if (own) await emulator.close();
    },
  };
}
