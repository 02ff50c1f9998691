import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiClients, type ApiClients, type VatClient } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import { CanonicalEvent, type CanonicalEventInput } from '../../src/domain/events.js';
import { recordKeyString, type RecordKey } from '../../src/domain/record-key.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { VatSettings } from '../../src/mapping/vat-settings.js';
import { createLogger } from '../../src/observability/logger.js';
import { createRecordProcessor } from '../../src/processors/record-processor.js';
import { createVatHandler, createVatReferenceData, type VatReferenceData } from '../../src/processors/vat.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore, type DeadLetterEntry, type DeadLetterStore } from '../../src/queue/dead-letter.js';
import { RECORD_JOB_VERSION } from '../../src/queue/jobs.js';
import { createKeys } from '../../src/queue/keys.js';
import { createProducer } from '../../src/queue/producer.js';
import { createRecordStore } from '../../src/queue/record-state.js';
import { createRequeuer } from '../../src/queue/requeue.js';
import { createVatLedger, type VatLedger } from '../../src/queue/vat-ledger.js';
import { RIG_ENTITY } from '../helpers/vat-rig.js';

/**
 * The VAT ledger against a model (issue 15): random sequences of invoice versions (amounts up and
 * down, a rate changed, a line at another rate), voids and deletions, refunds before and after
 * their invoice, refunds cancelled (voided credit notes) before and after their correction was
 * reported, duplicate deliveries, operator replays, runs of the VAT job under the emulator's
 * faults (answers dropped after processing, 5xx, timeouts, 429) and worker crashes at every step
 * of the VAT path (after the ledger claim, before the send, after the send before the ledger
 * write, after the ledger write, after a claim is withdrawn, after a refund's standing is noted,
 * before the refunds of an invoice are re-queued, before the dead letter is written), with time
 * moving in between. Real Redis and the emulator; the record processor runs on a job object of the test's
 * own with a clock of its own, so nothing waits for real time.
 *
 * After each sequence settles (faults off, every record run until it rests):
 * - per invoice, the VAT the emulator holds equals what the final invoice requires (computed here,
 *   by hand, in cents), or the newest VAT_CORRECTION_REQUIRED entry — decided on the final
 *   version — states exactly the difference (net, vat and gross);
 * - nothing is accepted twice: every accepted submission is a confirmed ledger entry with the very
 *   same body, and each VAT rate of an invoice is filed under one number (plus supplements);
 * - no ledger entry ends pending, in flight, unknown or unresolved, and no record is left unapplied;
 * - a refund ends with a correction of exactly its own amounts (one line per filed submission, adding
 *   up) when its invoice has VAT filed and is not voided or deleted, with none when its invoice has
 *   no VAT filed, and dead-lettered when its invoice never arrived;
 * - a cancelled refund whose correction was reported gets an undo of exactly its amounts; one
 *   cancelled before any correction gets none (unless a worker crashed between noting the
 *   correction and reporting it: then the undo says "if it was made").
 *
 * TAXSYNC_MODEL_RUNS sets the number of sequences (default 2000, about a minute); TAXSYNC_MODEL_SEED
 * replays a failing run with the seed fast-check printed.
 */

const RUNS = Number(process.env.TAXSYNC_MODEL_RUNS ?? 2000);
const SEED = process.env.TAXSYNC_MODEL_SEED === undefined ? undefined : Number(process.env.TAXSYNC_MODEL_SEED);
const LEASE_MS = 5_000;
const WAIT_DEADLINE_MS = 3_600_000;

type Rate = 19 | 7;
type Line = readonly [cents: number, rate: Rate];
type Fault = 'none' | 'drop' | 'error500' | 'timeout' | 'rate429';
/** A crash stops the worker for good; a stall pauses it until the sequence ends, when it resumes. */
type Crash =
  | 'none'
  | 'after-claim'
  | 'before-send'
  | 'after-send'
  | 'after-ledger'
  | 'after-withdraw'
  | 'after-note'
  | 'before-requeue'
  | 'before-dead-letter'
  | 'stall-before-send'
  | 'stall-after-send';
type Rec = 'I0' | 'I1' | 'R00' | 'R01' | 'R10';
type Step =
  | { kind: 'invoice'; inv: 0 | 1; lines: Line[]; status: 'active' | 'paid' }
  | { kind: 'void' | 'delete'; inv: 0 | 1 }
  | { kind: 'refund'; ref: 'R00' | 'R01' | 'R10'; cents: number; rate: Rate }
  /** The refund is cancelled (a voided credit note), as Stripe sends it: the whole refund again. */
  | { kind: 'cancel-refund'; ref: 'R00' | 'R01' | 'R10' }
  | { kind: 'redeliver' }
  | { kind: 'work' }
  | { kind: 'process'; rec: Rec; fault: Fault; crash: Crash }
  | { kind: 'replay'; rec: Rec }
  | { kind: 'tick'; seconds: number };

// A line of 0.00 now and then: an invoice that totals nothing carries no VAT (until it does).
const line = fc.tuple(fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 9, arbitrary: fc.integer({ min: 1, max: 50_000 }) }), fc.constantFrom<Rate>(19, 7));
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('invoice' as const), inv: fc.constantFrom(0 as const, 1 as const), lines: fc.array(line, { minLength: 1, maxLength: 3 }), status: fc.constantFrom('active' as const, 'paid' as const) }) },
  // An invoice that totals 0.00: no VAT, until a later version has some.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('invoice' as const), inv: fc.constantFrom(0 as const, 1 as const), lines: fc.constant<Line[]>([[0, 19]]), status: fc.constant('active' as const) }) },
  // The workers catch up: every record runs once, in order, without faults.
  { weight: 4, arbitrary: fc.constant({ kind: 'work' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('void' as const, 'delete' as const), inv: fc.constantFrom(0 as const, 1 as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), ref: fc.constantFrom('R00' as const, 'R01' as const, 'R10' as const), cents: fc.integer({ min: 1, max: 20_000 }), rate: fc.constantFrom<Rate>(19, 7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel-refund' as const), ref: fc.constantFrom('R00' as const, 'R01' as const, 'R10' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'redeliver' as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('process' as const),
      rec: fc.constantFrom<Rec>('I0', 'I1', 'R00', 'R01', 'R10'),
      fault: fc.oneof({ weight: 4, arbitrary: fc.constant<Fault>('none') }, { weight: 3, arbitrary: fc.constantFrom<Fault>('drop', 'error500', 'rate429') }, { weight: 1, arbitrary: fc.constant<Fault>('timeout') }),
      crash: fc.oneof(
        { weight: 5, arbitrary: fc.constant<Crash>('none') },
        { weight: 3, arbitrary: fc.constantFrom<Crash>('after-claim', 'before-send', 'after-send', 'after-ledger', 'after-withdraw', 'after-note', 'before-requeue', 'before-dead-letter') },
        { weight: 2, arbitrary: fc.constantFrom<Crash>('stall-before-send', 'stall-after-send') },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replay' as const), rec: fc.constantFrom<Rec>('I0', 'I1', 'R00', 'R01', 'R10') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), seconds: fc.integer({ min: 1, max: 600 }) }) },
);
const sequenceArb = fc.record({ increases: fc.constantFrom('manual' as const, 'supplement' as const), steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }) });

/** Sequences that are always run first: each once found a bug, or guards one the random ones rarely reach. */
const EXAMPLES: { increases: 'manual' | 'supplement'; steps: Step[] }[] = [
  // A worker stalls with a lost answer in hand; its successor settles the entry; the stalled one resumes.
  {
    increases: 'manual',
    steps: [
      { kind: 'invoice', inv: 0, lines: [[10_000, 19]], status: 'active' },
      { kind: 'process', rec: 'I0', fault: 'drop', crash: 'stall-after-send' },
      { kind: 'tick', seconds: 60 },
      { kind: 'process', rec: 'I0', fault: 'none', crash: 'none' },
    ],
  },
  // The same, the successor finding a changed invoice behind the lost answer.
  {
    increases: 'supplement',
    steps: [
      { kind: 'invoice', inv: 0, lines: [[10_000, 19]], status: 'active' },
      { kind: 'process', rec: 'I0', fault: 'timeout', crash: 'stall-before-send' },
      { kind: 'tick', seconds: 60 },
      { kind: 'invoice', inv: 0, lines: [[12_000, 19], [500, 7]], status: 'paid' },
      { kind: 'work' },
    ],
  },
  // A refund decided while its invoice had no VAT, then the invoice is filed.
  {
    increases: 'manual',
    steps: [
      { kind: 'refund', ref: 'R10', cents: 1, rate: 19 },
      { kind: 'invoice', inv: 1, lines: [[0, 19]], status: 'active' },
      { kind: 'work' },
      { kind: 'invoice', inv: 1, lines: [[1, 19]], status: 'active' },
    ],
  },
  // Found by the model: the invoice's VAT is filed by the resend that resolves a crashed attempt,
  // not by a new submission; the refund decided while it had none must be decided again.
  {
    increases: 'manual',
    steps: [
      { kind: 'refund', ref: 'R00', cents: 1, rate: 19 },
      { kind: 'invoice', inv: 0, lines: [[0, 19]], status: 'active' },
      { kind: 'work' },
      { kind: 'invoice', inv: 0, lines: [[1, 19]], status: 'active' },
      { kind: 'process', rec: 'I0', fault: 'drop', crash: 'before-send' },
      { kind: 'work' },
    ],
  },
  // A refund cancelled before any correction was reported, its invoice filing VAT afterwards: nothing to undo.
  {
    increases: 'manual',
    steps: [
      { kind: 'invoice', inv: 0, lines: [[0, 19]], status: 'active' },
      { kind: 'refund', ref: 'R00', cents: 1_000, rate: 19 },
      { kind: 'work' },
      { kind: 'cancel-refund', ref: 'R00' },
      { kind: 'work' },
      { kind: 'invoice', inv: 0, lines: [[10_000, 19]], status: 'active' },
      { kind: 'work' },
    ],
  },
  // A refund's correction reported, then the refund cancelled, a worker crashing at each step.
  {
    increases: 'supplement',
    steps: [
      { kind: 'invoice', inv: 0, lines: [[10_000, 19]], status: 'active' },
      { kind: 'work' },
      { kind: 'invoice', inv: 0, lines: [[15_000, 19]], status: 'active' },
      { kind: 'work' },
      { kind: 'refund', ref: 'R00', cents: 8_000, rate: 19 },
      { kind: 'process', rec: 'R00', fault: 'none', crash: 'after-note' },
      { kind: 'process', rec: 'R00', fault: 'none', crash: 'before-dead-letter' },
      { kind: 'work' },
      { kind: 'cancel-refund', ref: 'R00' },
      { kind: 'process', rec: 'R00', fault: 'none', crash: 'after-note' },
      { kind: 'work' },
    ],
  },
];

/** Half-up cents of VAT at a whole-percent rate: ⌊(net × rate + 50) / 100⌋ for a positive net. */
const vatCents = (net: number, rate: Rate) => Math.floor((net * rate + 50) / 100);
const euros = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
const cents = (decimal: string) => Math.round(Number(decimal) * 100);

/** What the final invoice requires, by hand: per rate, net = Σ lines, vat = net × rate half-up. */
function required(lines: readonly Line[] | undefined): { net: number; vat: number; gross: number } {
  const byRate = new Map<Rate, number>();
  for (const [c, rate] of lines ?? []) byRate.set(rate, (byRate.get(rate) ?? 0) + c);
  let net = 0;
  let vat = 0;
  for (const [rate, n] of byRate) {
    net += n;
    vat += vatCents(n, rate);
  }
  return { net, vat, gross: net + vat };
}

interface Shared {
  emulator: Emulator & { url: string };
  api: ApiClients;
  redis: Redis;
  reference: VatReferenceData;
}

/** Hangs for ever: a worker that died at this point does nothing more. */
const never = () => new Promise<never>(() => {});

async function runSequence(shared: Shared, run: number, input: { increases: 'manual' | 'supplement'; steps: readonly Step[] }): Promise<void> {
  const prefix = `{taxsync-model-${randomUUID().slice(0, 8)}}`;
  const { emulator, redis } = shared;
  emulator.state.vatTransactions.clear();
  emulator.faults.clear();
  const keys = createKeys(prefix);
  const queues = createQueues(redis, prefix);
  const start = Date.parse('2025-03-15T12:00:00Z') + run * 60_000;
  let now = start;
  const clock = () => new Date(now);
  try {
    const deadLetters = createDeadLetterStore(queues['dead-letter']);
    const records = createRecordStore(redis, keys);
    const producer = createProducer({ queues, connection: redis, keys, deadLetters, trace: { maxEntries: 0, maxAgeMs: 60_000 }, deliveryTtlMs: 60_000, coalesceDelayMs: 0, vat: true, clock });
    // Leases are decided on Redis's clock: moved as far as the sequence moves its own.
    const ledger = createVatLedger(redis, keys, { leaseMs: LEASE_MS, clock, timeShift: () => now - start });
    const requeuer = createRequeuer({ queues, records });
    const settings = VatSettings.parse({
      seller_country: 'DE',
      registrations: [{ taxable_jurisdiction: 'DE' }],
      rates: { DE: { standard: '19.00', reduced: ['7.00'] } },
      increases: input.increases,
    });
    const logger = createLogger({ level: 'silent' });
    const base = {
      ledger,
      settings,
      reference: shared.reference,
      records,
      clock,
      unknownLimit: 1_000,
      requeue: async (record: RecordKey) => {
        await records.reopen(record);
        await requeuer.ensureQueued(record);
      },
    };
    const processorFor = (vat: VatClient, l: VatLedger, crashing: { deadLetters?: DeadLetterStore; requeue?: (record: RecordKey) => Promise<void> } = {}) =>
      createRecordProcessor({
        queue: queues['vat-submissions'],
        handler: createVatHandler({ ...base, vat, ledger: l, ...(crashing.requeue === undefined ? {} : { requeue: crashing.requeue }) }),
        records,
        deadLetters: crashing.deadLetters ?? deadLetters,
        redis,
        keys,
        trace: { maxEntries: 0, maxAgeMs: 60_000 },
        logger,
        wait: { deadlineMs: WAIT_DEADLINE_MS, baseMs: 1_000, capMs: 60_000 },
        clock,
        random: () => 0.5,
      });
    const healthy = processorFor(shared.api.vat, ledger);

    const id = (rec: Rec) => `S${run}-${rec}`;
    const record = (rec: Rec): RecordKey => ({ kind: 'vat', source: 'api', external_id: id(rec) });
    const versions = new Map<Rec, number>();
    const finalInvoice = new Map<'I0' | 'I1', { event: CanonicalEventInput; lines?: Line[]; gone: boolean }>();
    const refunds = new Map<'R00' | 'R01' | 'R10', { cents: number; tax: number; event: CanonicalEventInput; cancelled: boolean }>();
    let last: CanonicalEventInput | undefined;

    async function deliver(rec: Rec, event: CanonicalEventInput): Promise<boolean> {
      const [outcome] = (await producer.accept({ events: [CanonicalEvent.parse(event)] })).outcomes;
      last = event;
      return outcome === 'queued';
    }
    function invoiceEvent(rec: 'I0' | 'I1', type: 'invoice.upserted' | 'invoice.cancelled' | 'invoice.deleted', data: Record<string, unknown>): CanonicalEventInput {
      const version = (versions.get(rec) ?? 0) + 1;
      versions.set(rec, version);
      return {
        id: `${id(rec)}-v${version}`,
        type,
        occurred_at: new Date(Date.UTC(2025, 2, 2, 10, 0, 0) + version * 1000).toISOString(),
        // A void or deletion is final, as Stripe's and Shopify's are (docs/events.md, "Ordering").
        ...(type === 'invoice.upserted' ? {} : { final: true, precedence: 30 }),
        connector: 'erp',
        record: { kind: 'transaction', source: 'api', external_id: id(rec) },
        data,
      } as CanonicalEventInput;
    }

    const jobs = new Map<string, number>();
    /** Records a worker crashed or stalled in while it worked on them. */
    const crashedIn = new Set<Rec>();
    const stalled: { resume: () => void; running: Promise<unknown> }[] = [];
    async function processOnce(rec: Rec, processor = healthy): Promise<{ kind: string; until?: number }> {
      const key = recordKeyString(record(rec));
      let until: number | undefined;
      const job = {
        id: key,
        data: { v: RECORD_JOB_VERSION, record: record(rec) },
        attemptsMade: jobs.get(key) ?? 0,
        opts: { attempts: 1_000 },
        moveToDelayed: (at: number) => {
          until = at;
          return Promise.resolve();
        },
      } as unknown as Job;
      const run = processor(job, 'token').then(
        (kind) => ({ kind }),
        (error: unknown) => {
          if (until !== undefined) return { kind: 'delayed', until };
          jobs.set(key, (jobs.get(key) ?? 0) + 1);
          return { kind: 'retry', error };
        },
      );
      return run;
    }

    for (const step of input.steps) {
      switch (step.kind) {
        case 'invoice': {
          const rec = step.inv === 0 ? 'I0' : 'I1';
          const event = invoiceEvent(rec, 'invoice.upserted', {
            number: id(rec),
            issued_at: '2025-03-02T10:00:00+01:00',
            status: step.status,
            currency: 'EUR',
            tax_inclusive: false,
            customer: { external_id: 'C-1', name: 'Acme GmbH', tax_number: 'DE123456789' },
            addresses: { billing: { country: 'DE' } },
            lines: step.lines.map(([c, rate], i) => ({ sku: `L${i}`, unit_price: euros(c), quantity: '1', tax_rate: rate === 19 ? '0.19' : '0.07' })),
          });
          if (await deliver(rec, event)) finalInvoice.set(rec, { event, lines: [...step.lines], gone: false });
          break;
        }
        case 'void':
        case 'delete': {
          const rec = step.inv === 0 ? 'I0' : 'I1';
          const event = invoiceEvent(rec, step.kind === 'void' ? 'invoice.cancelled' : 'invoice.deleted', {});
          if (await deliver(rec, event)) finalInvoice.set(rec, { event, gone: true });
          break;
        }
        case 'refund': {
          const known = refunds.get(step.ref);
          if (known) {
            await deliver(step.ref, known.event);
            break;
          }
          const tax = vatCents(step.cents, step.rate);
          const event: CanonicalEventInput = {
            id: `${id(step.ref)}-v1`,
            type: 'refund.created',
            occurred_at: '2025-03-03T10:00:00Z',
            connector: 'erp',
            record: { kind: 'transaction', source: 'api', external_id: id(step.ref) },
            data: { invoice_external_id: id(step.ref === 'R10' ? 'I1' : 'I0'), issued_at: '2025-03-03T10:00:00Z', currency: 'EUR', amount: euros(step.cents), tax_amount: euros(tax) },
          };
          refunds.set(step.ref, { cents: step.cents, tax, event, cancelled: false });
          await deliver(step.ref, event);
          break;
        }
        case 'cancel-refund': {
          const known = refunds.get(step.ref);
          if (known === undefined) break;
          const event = {
            ...known.event,
            id: `${id(step.ref)}-v2-cancelled`,
            type: 'refund.cancelled',
            occurred_at: '2025-03-03T10:00:01Z',
            final: true,
          } as CanonicalEventInput;
          if (await deliver(step.ref, event)) known.cancelled = true;
          break;
        }
        case 'redeliver':
          if (last !== undefined) await producer.accept({ events: [CanonicalEvent.parse(last)] });
          break;
        case 'work':
          emulator.faults.clear();
          for (const rec of ['I0', 'I1', 'R00', 'R01', 'R10'] as const) await processOnce(rec);
          break;
        case 'process': {
          emulator.faults.clear();
          if (step.fault === 'drop') emulator.faults.set([{ kind: 'drop', route: 'vat.submit', times: 1 }]);
          if (step.fault === 'error500') emulator.faults.set([{ kind: 'error', route: 'vat.submit', status: 500, times: 1 }]);
          if (step.fault === 'rate429') emulator.faults.set([{ kind: 'rate_limit', route: 'vat.submit', retry_after_s: 1, times: 1 }]);
          // Processed, then answered after the client's headers timeout (below) ran out.
          if (step.fault === 'timeout') emulator.faults.set([{ kind: 'latency', route: 'vat.submit', ms: 150, phase: 'after', times: 1 }]);
          if (step.crash === 'none') {
            await processOnce(step.rec);
            break;
          }
          crashedIn.add(step.rec);
          let crash!: () => void;
          const crashed = new Promise<void>((resolve) => (crash = resolve));
          // A stalled worker waits here until the sequence ends, then carries on with what it had.
          let resume!: () => void;
          const resumed = new Promise<void>((resolve) => (resume = resolve));
          const stop = async (): Promise<void> => {
            crash();
            if (step.crash.startsWith('stall')) await resumed;
            else await never();
          };
          const vat: VatClient = {
            ...shared.api.vat,
            async submitTransaction(body) {
              if (step.crash === 'before-send' || step.crash === 'stall-before-send') await stop();
              const answer = await shared.api.vat.submitTransaction(body).catch((error: unknown) => ({ error }));
              if (step.crash === 'after-send' || step.crash === 'stall-after-send') await stop();
              if ('error' in answer) throw answer.error;
              return answer;
            },
          };
          const crashingLedger: VatLedger = {
            ...ledger,
            async begin(...args) {
              const claim = await ledger.begin(...args);
              if (step.crash === 'after-claim') await stop();
              return claim;
            },
            async settle(...args) {
              const written = await ledger.settle(...args);
              if (step.crash === 'after-ledger') await stop();
              return written;
            },
            async withdraw(...args) {
              const done = await ledger.withdraw(...args);
              if (step.crash === 'after-withdraw') await stop();
              return done;
            },
            async noteRefund(...args) {
              await ledger.noteRefund(...args);
              if (step.crash === 'after-note') await stop();
            },
          };
          const crashingDeadLetters: DeadLetterStore = {
            ...deadLetters,
            async add(entry) {
              if (step.crash === 'before-dead-letter') await stop();
              return deadLetters.add(entry);
            },
          };
          const requeue = async (r: RecordKey) => {
            if (step.crash === 'before-requeue') await stop();
            await base.requeue(r);
          };
          const running = processOnce(step.rec, processorFor(vat, crashingLedger, { deadLetters: crashingDeadLetters, requeue }));
          await Promise.race([running, crashed]);
          if (step.crash.startsWith('stall')) stalled.push({ resume, running });
          break;
        }
        case 'replay': {
          const [newest] = (await lettersOf(step.rec)).sort((a, b) => b.last_failed_at.localeCompare(a.last_failed_at));
          // An operator's `dlq replay`: the version is marked not applied again and the job runs.
          if (newest !== undefined) await records.reopen(record(step.rec));
          break;
        }
        case 'tick':
          now += step.seconds * 1000;
          break;
      }
    }
    emulator.faults.clear();
    // Stalled workers wake up (their leases long gone, their successors done or not) and finish.
    for (const s of stalled) s.resume();
    await Promise.all(stalled.map((s) => s.running));

    async function lettersOf(rec: Rec): Promise<DeadLetterEntry[]> {
      const out: DeadLetterEntry[] = [];
      for await (const entry of deadLetters.all()) if (entry.record && recordKeyString(entry.record) === recordKeyString(record(rec))) out.push(entry);
      return out;
    }

    // Settle: every record runs until it rests; time moves over leases, delays and waits.
    const all: Rec[] = ['I0', 'I1', 'R00', 'R01', 'R10'];
    for (let pass = 0; ; pass++) {
      let moved = false;
      for (const rec of all) {
        const state = await records.read(record(rec));
        if (state.seq <= state.appliedSeq) continue;
        moved = true;
        const result = await processOnce(rec);
        if (result.kind === 'delayed') now = Math.max(now, result.until ?? now) + LEASE_MS;
        else if (result.kind === 'retry') now += 60_000;
      }
      if (!moved) break;
      if (pass === 15) now += WAIT_DEADLINE_MS;
      if (pass > 40) throw new Error('the sequence does not settle');
    }

    // Invariants.
    const accepted = emulator.state.vatTransactions.live().map((e) => e.value);
    for (const rec of ['I0', 'I1'] as const) {
      const base = id(rec);
      const mine = accepted.filter((a) => a.invoice_number === base || a.invoice_number.startsWith(`${base} (`));
      const entries = await ledger.forRecord(recordKeyString(record(rec)));
      expect(entries.filter((e) => e.state !== 'confirmed').map((e) => `${e.invoice_number}: ${e.state}`), `${base}: open or failed ledger entries`).toEqual([]);
      // Nothing accepted that the ledger does not hold as confirmed, with the very same body.
      for (const a of mine) {
        const entry = entries.find((e) => e.invoice_number === a.invoice_number && e.entity_jurisdiction === a.entity_jurisdiction);
        expect(entry, `${a.invoice_number} accepted but not in the ledger`).toBeDefined();
        const body = JSON.parse(entry!.body!) as Record<string, unknown>;
        for (const [field, value] of Object.entries(body)) expect(a[field as keyof typeof a], `${a.invoice_number}.${field}`).toBe(value);
      }
      expect(entries.length, `${base}: confirmed entries the service does not hold`).toBe(mine.length);
      const parts = mine.filter((a) => !a.invoice_number.includes('(supplement')).map((a) => `${a.vat_rate}|${a.vat_rate_type}`);
      expect(new Set(parts).size, `${base}: one number per VAT rate`).toBe(parts.length);

      const final = finalInvoice.get(rec);
      const want = required(final === undefined || final.gone ? undefined : final.lines);
      const held = mine.reduce((s, a) => ({ net: s.net + cents(a.net), vat: s.vat + cents(a.vat), gross: s.gross + cents(a.gross) }), { net: 0, vat: 0, gross: 0 });
      if (held.net === want.net && held.vat === want.vat && held.gross === want.gross) continue;
      const corrections = (await lettersOf(rec)).filter((l) => l.error.code === 'VAT_CORRECTION_REQUIRED' && (l.event as { id?: string } | null)?.id === final?.event.id);
      expect(corrections, `${base}: filed ${JSON.stringify(held)}, required ${JSON.stringify(want)}, and no correction for the final version`).toHaveLength(1);
      const stated = (field: 'net' | 'vat' | 'gross') =>
        (corrections[0]!.error.fields?.[field] ?? []).reduce((sum, m) => sum + cents(/: (-?\d+\.\d{2})$/.exec(m)?.[1] ?? 'NaN'), 0);
      expect({ net: stated('net'), vat: stated('vat'), gross: stated('gross') }, `${base}: the correction states the difference`).toEqual({
        net: want.net - held.net,
        vat: want.vat - held.vat,
        gross: want.gross - held.gross,
      });
    }

    for (const [rec, refund] of refunds) {
      const inv = rec === 'R10' ? 'I1' : 'I0';
      const letters = await lettersOf(rec);
      const invoiceFiled = (await ledger.forRecord(recordKeyString(record(inv)))).some((e) => e.state === 'confirmed');
      const invoice = finalInvoice.get(inv);
      const others = letters.filter((l) => l.error.code !== 'VAT_CORRECTION_REQUIRED').map((l) => l.error.code);
      if (invoice === undefined && versions.get(inv) === undefined) {
        // Its invoice never came: dead-lettered as waiting in vain (a refund cancelled first may end quietly).
        if (refund.cancelled) expect(others.length, `${rec}: its invoice never came`).toBeLessThanOrEqual(1);
        else expect(others, `${rec}: its invoice never came`).toEqual([expect.stringMatching(/^(WAITING_EXPIRED|REFUND_ORIGINAL_MISSING)$/)]);
        continue;
      }
      // One line per filed submission it corrects (a supplement first): they add up to the refund.
      const sum = (letter: DeadLetterEntry, field: string) => (letter.error.fields?.[field] ?? []).reduce((total, m) => total + cents(/: (-?\d+\.\d{2})$/.exec(m)?.[1] ?? 'NaN'), 0);
      const amounts = (letter: DeadLetterEntry) => ({ net: sum(letter, 'net'), vat: sum(letter, 'vat'), gross: sum(letter, 'gross') });
      const corrections = letters.filter((l) => l.error.code === 'VAT_CORRECTION_REQUIRED');
      const taken = corrections.filter((l) => sum(l, 'net') < 0);
      const undone = corrections.filter((l) => sum(l, 'net') > 0);
      const own = { net: refund.cents, vat: refund.tax, gross: refund.cents + refund.tax };
      const negate = (a: typeof own) => ({ net: -a.net, vat: a.vat === 0 ? 0 : -a.vat, gross: -a.gross });
      if (invoiceFiled && invoice?.gone !== true && !refund.cancelled) expect(taken, `${rec}: a refund of filed VAT needs a correction`).not.toEqual([]);
      if (!invoiceFiled) expect(corrections, `${rec}: nothing filed, nothing to correct`).toEqual([]);
      for (const letter of taken) expect(amounts(letter), `${rec}: the correction takes back the refund`).toEqual(negate(own));
      for (const letter of undone) expect(amounts(letter), `${rec}: the undo gives back the refund`).toEqual(own);
      if (!refund.cancelled) expect(undone, `${rec}: not cancelled, nothing to undo`).toEqual([]);
      // A reported correction of a cancelled refund is undone (unless its invoice's own correction reverses everything).
      if (refund.cancelled && taken.length > 0 && invoice?.gone !== true) expect(undone, `${rec}: its correction was reported, then it was cancelled`).not.toEqual([]);
      // An undo with no correction before it only where a worker crashed between noting and reporting it ("if it was made").
      if (refund.cancelled && taken.length === 0 && !crashedIn.has(rec)) expect(undone, `${rec}: cancelled before any correction: nothing to undo`).toEqual([]);
      expect(others, `${rec}: other dead letters`).toEqual([]);
    }
  } finally {
    await closeQueues(queues);
    const stream = redis.scanStream({ match: `${prefix}*`, count: 500 });
    for await (const found of stream as AsyncIterable<string[]>) if (found.length > 0) await redis.unlink(...found);
  }
}

describe('the VAT ledger against a model: never doubled, never lost', () => {
  let shared: Shared;
  let setup: ApiClients;

  beforeAll(async () => {
    const emulator = await startEmulator({ port: 0, host: '127.0.0.1', entities: [{ id: RIG_ENTITY, name: 'Beta GmbH' }] });
    const credentials = { taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) };
    setup = createApiClients(credentials);
    // Submissions only: a timeout fault answers 150 ms late, the client gives up after 80 ms, after
    // the service processed it. (On a loaded machine a slow answer times out too: one more unknown
    // outcome, which the invariants must survive anyway.)
    const api = createApiClients({ ...credentials, timeouts: { connectMs: 5_000, headersMs: 80, bodyMs: 5_000 } });
    await setup.vat.registrations.create({ taxable_jurisdiction: 'DE', entity: RIG_ENTITY, registration_type: 'standard', date_of_registration: '2024-01-01' });
    const redis = createRedis(inject('redisUrl'), 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
    const settings = VatSettings.parse({ seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }] });
    const reference = createVatReferenceData(setup.vat, settings, { ttlMs: 86_400_000 });
    await reference.get();
    shared = { emulator, api, redis, reference };
  });
  afterAll(async () => {
    shared.redis.disconnect();
    await shared.api.close();
    await setup.close();
    await shared.emulator.close();
  });

  it('holds every invariant over random sequences of changes, refunds, faults and crashes', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(sequenceArb, (sequence) => runSequence(shared, run++, sequence)),
      // On failure fast-check prints the seed, the path and the shrunk sequence (rerun: TAXSYNC_MODEL_SEED).
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), examples: EXAMPLES.map((e) => [e]) },
    );
  }, 600_000);
});
