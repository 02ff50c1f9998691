import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { connectionAges, type RecordedActivity } from '../activity/silence.js';
import type { Connections } from '../config/connection-list.js';

/** What a record job ended in, for `taxsync_jobs_total{outcome}`. */
export type JobOutcome = 'applied' | 'nothing-new' | 'dead-lettered' | 'retried' | 'waiting' | 'rate-limited' | 'yielded' | 'coalescing' | 'taken-over';

/** One request to the tax engine or VAT service (src/api reports these without knowing prom-client). */
export interface ApiCallObservation {
  service: string;
  /** The endpoint table name (`transactions.upsert`), never a URL. */
  endpoint: string;
  /** The HTTP status, or the error code when no response came back (`API_TIMEOUT`, `API_NETWORK`). */
  status: string;
  seconds: number;
}

/** One way an answer differed from the contract (src/api/drift.ts reports these without knowing prom-client). */
export interface DriftObservation {
  /** The endpoint template (`PUT /v1/transactions/`). */
  endpoint: string;
  /** The field path, `[]` for array indices (`items[].taxability_reason`). */
  path: string;
}

/** Distinct {endpoint, path} series of the drift counter; past it the path reads `(other)`. */
export const MAX_DRIFT_SERIES = 200;

/** What the scrape-time gauges read: the process's own queues, never a connection of their own. */
export interface QueueSource {
  /** The record queues (customers, transactions, vat-submissions). */
  queues: readonly Queue[];
  deadLetter: Queue;
  /** The `{prefix}:counters` hash. */
  counters(): Promise<Record<string, string>>;
  /** The last accepted event of each connection (src/activity/store.ts, lastEvents). */
  activity?(): Promise<RecordedActivity>;
  /** The installation's connections: the silence gauge names each with its source. */
  connections: Connections;
  clock?: () => number;
}

/**
 * One registry per process (never prom-client's global one, so tests stay isolated). Later parts
 * add their metrics here; `/metrics` exposes all of it.
 */
/**
 * The outcomes of `taxsync_vat_submissions_total` (docs/vat.md, "The ledger"): accepted (201),
 * accepted_with_warnings (200), accepted_with_errors (stored, but the service will not report it as
 * it is: committed false, a validity or compliance status error — an operator looks),
 * confirmed_by_duplicate (a duplicate answer after a lost one),
 * unknown (sent, answer lost), released (certainly not processed: 429, refused credentials),
 * rejected, unresolved (an operator decides), fenced (a stalled attempt's write refused),
 * collision (another record holds the number).
 */
export const VAT_SUBMISSION_OUTCOMES = [
  'accepted',
  'accepted_with_warnings',
  'accepted_with_errors',
  'confirmed_by_duplicate',
  'unknown',
  'released',
  'rejected',
  'unresolved',
  'fenced',
  'collision',
] as const;
export type VatSubmissionOutcome = (typeof VAT_SUBMISSION_OUTCOMES)[number];

export interface Metrics {
  registry: Registry;
  /** `connector`: the platform; `connection`: the connection (docs/connections.md; a platform's name for its default one). */
  webhooks: Counter<'connector' | 'connection' | 'outcome'>;
  events: Counter<'connector' | 'connection' | 'outcome'>;
  vatSubmissions: Counter<'outcome'>;
  jobs: Counter<'queue' | 'outcome'>;
  coalesced: Counter<'queue'>;
  apiCalls: Counter<'service' | 'endpoint' | 'status'>;
  apiCallDuration: Histogram<'service' | 'endpoint'>;
  responseDrift: Counter<'endpoint' | 'path'>;
  idUnknown: Counter<'queue'>;
  unchanged: Counter<'queue'>;
  /** Pass to createApiClients({ onCall }). */
  observeApiCall: (call: ApiCallObservation) => void;
  /** Pass to createDriftReporter({ count }) (src/api/drift.ts), which createApiClients({ onDrift }) takes. */
  observeDrift: (drift: DriftObservation) => void;
  /** Pass to createRecordProcessor({ onIdUnknown }). */
  observeIdUnknown: (queue: string) => void;
  /** Pass to createRecordProcessor({ onUnchanged }). */
  observeUnchanged: (queue: string) => void;
  /** Pass to createRecordProcessor({ onOutcome }). */
  observeJob: (queue: string, outcome: JobOutcome) => void;
  /**
   * Where the queue gauges read from at scrape time. Until set they have no samples; the last
   * source set wins (in `taxsync start` the webhook server and the workers share one registry).
   */
  watchQueues: (source: QueueSource | undefined) => void;
}

/** A scrape must answer even with Redis slow or gone: the gauges then have no samples. */
const SCRAPE_TIMEOUT_MS = 1_000;
const GAUGE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('scrape timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'taxsync_' });
  let source: QueueSource | undefined;

  const scrapeErrors = new Counter({
    name: 'taxsync_metrics_read_errors_total',
    help: 'Scrape-time reads of Redis that failed or timed out, shown from the next scrape on (the metric read keeps its previous value)',
    labelNames: ['metric'],
    registers: [registry],
  });
  // Each scrape-time reader swallows its failure (one unreadable source must not fail all of
  // /metrics) and leaves its metric as it was rather than report a false zero.
  async function read<T>(metric: string, fn: (s: QueueSource) => Promise<T>): Promise<T | undefined> {
    if (!source) return undefined;
    try {
      return await within(fn(source), SCRAPE_TIMEOUT_MS);
    } catch {
      scrapeErrors.inc({ metric });
      return undefined;
    }
  }

  const jobs = new Counter({
    name: 'taxsync_jobs_total',
    help: 'Record jobs by queue and outcome (applied, nothing-new, dead-lettered, retried, waiting, rate-limited, yielded, coalescing)',
    labelNames: ['queue', 'outcome'],
    registers: [registry],
  });
  const coalesced = new Counter({
    name: 'taxsync_coalesced_events_total',
    help: 'Record jobs that found nothing newer than the version already applied (their events were sent by an earlier job)',
    labelNames: ['queue'],
    registers: [registry],
  });
  const apiCalls = new Counter({
    name: 'taxsync_api_calls_total',
    help: 'API requests by service, endpoint name and HTTP status (or error code when no response came back)',
    labelNames: ['service', 'endpoint', 'status'],
    registers: [registry],
  });
  const apiCallDuration = new Histogram({
    name: 'taxsync_api_call_duration_seconds',
    help: 'API request latency by service and endpoint name',
    labelNames: ['service', 'endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const responseDrift = new Counter({
    name: 'taxsync_response_drift_total',
    help: 'Answers that differed from the contract (a null, an unlisted enum value, an undocumented or missing field, another type) but were read anyway, by endpoint template and field path; each new shape is logged once',
    labelNames: ['endpoint', 'path'],
    registers: [registry],
  });
  const driftSeries = new Set<string>();
  const idUnknown = new Counter({
    name: 'taxsync_records_id_unknown_total',
    help: "Writes the service accepted (2xx) whose answer had no readable id that reading the record back could not supply either: applied, the tax engine's id unknown",
    labelNames: ['queue'],
    registers: [registry],
  });
  const unchanged = new Counter({
    name: 'taxsync_writes_skipped_unchanged_total',
    help: 'Writes not sent because the mapped body equals the one the service last accepted for that record (skip unchanged)',
    labelNames: ['queue'],
    registers: [registry],
  });

  new Gauge({
    name: 'taxsync_queue_jobs',
    help: 'Jobs in each record queue by state (waiting, active, delayed, failed), read at scrape time',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      const counts = await read('taxsync_queue_jobs', (s) => Promise.all(s.queues.map(async (q) => ({ queue: q.name, counts: await q.getJobCounts(...GAUGE_STATES) }))));
      if (!counts) return;
      this.reset();
      for (const { queue, counts: c } of counts) {
        for (const state of GAUGE_STATES) this.set({ queue, state }, c[state] ?? 0);
      }
    },
  });
  new Gauge({
    name: 'taxsync_queue_oldest_waiting_seconds',
    help: 'Age of the oldest job ready to run in each record queue (0 when none waits), read at scrape time',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      const ages = await read('taxsync_queue_oldest_waiting_seconds', (s) =>
        Promise.all(
          s.queues.map(async (q) => {
            // The wait list is newest first: ascending order puts the oldest at index 0.
            const [oldest] = await q.getJobs(['wait'], 0, 0, true);
            const now = (s.clock ?? Date.now)();
            const readySince = oldest ? oldest.timestamp + (oldest.delay ?? 0) : now;
            return { queue: q.name, seconds: Math.max(0, (now - readySince) / 1000) };
          }),
        ),
      );
      if (!ages) return;
      this.reset();
      for (const { queue, seconds } of ages) this.set({ queue }, seconds);
    },
  });
  new Gauge({
    name: 'taxsync_dead_letter_entries',
    help: 'Entries in the dead-letter queue, read at scrape time',
    registers: [registry],
    async collect() {
      const n = await read('taxsync_dead_letter_entries', (s) => s.deadLetter.getJobCountByTypes('waiting'));
      if (n !== undefined) this.set(n);
    },
  });
  new Counter({
    name: 'taxsync_stale_events_total',
    help: 'Events dropped because a newer one was already held for their record (all processes, from Redis at scrape time)',
    registers: [registry],
    async collect() {
      const counters = await read('taxsync_stale_events_total', (s) => s.counters());
      if (!counters) return;
      // The count lives in Redis (all processes): mirror it rather than add to it.
      const n = Number(counters.stale_events ?? 0);
      this.reset();
      if (Number.isFinite(n) && n > 0) this.inc(n);
    },
  });

  new Counter({
    name: 'taxsync_dead_letter_archived_total',
    labelNames: ['reason'],
    help: 'Dead-letter entries archived and removed by retention, by reason (max-age, max-entries; all processes, from Redis at scrape time)',
    registers: [registry],
    async collect() {
      const counters = await read('taxsync_dead_letter_archived_total', (s) => s.counters());
      if (!counters) return;
      this.reset();
      for (const reason of ['max-age', 'max-entries']) {
        const n = Number(counters[`dead_letter_archived:${reason}`] ?? 0);
        if (Number.isFinite(n) && n > 0) this.inc({ reason }, n);
      }
    },
  });

  new Counter({
    name: 'taxsync_tax_variances_total',
    help: 'Invoices whose tax charged by the platform differed from the engine\'s above TAXSYNC_TAX_VARIANCE_ABS and _PCT (all processes, from Redis at scrape time)',
    registers: [registry],
    async collect() {
      const counters = await read('taxsync_tax_variances_total', (s) => s.counters());
      if (!counters) return;
      const n = Number(counters.tax_variances ?? 0);
      this.reset();
      if (Number.isFinite(n) && n > 0) this.inc(n);
    },
  });
  new Gauge({
    name: 'taxsync_source_last_event_age_seconds',
    help: 'Seconds since the last event accepted from each connection (webhooks), labelled with its source, read at scrape time: alert on silence',
    labelNames: ['connection', 'source'],
    registers: [registry],
    async collect() {
      const seen = await read('taxsync_source_last_event_age_seconds', async (s) => ({
        recorded: s.activity ? await s.activity() : { byConnection: {}, bySource: {} },
        connections: s.connections,
        now: (s.clock ?? Date.now)(),
      }));
      if (!seen) return;
      this.reset();
      // The threshold plays no part here: Prometheus's rules decide what is silent.
      for (const c of connectionAges(seen.recorded, seen.connections, new Date(seen.now), Infinity)) {
        if (c.age_s !== null) this.set({ connection: c.id, source: c.source }, c.age_s);
      }
    },
  });
  new Gauge({
    name: 'taxsync_reconcile_findings',
    help: 'Findings of the last `taxsync reconcile` run by kind (missing, extra, differing; matched records too), from Redis at scrape time',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const counters = await read('taxsync_reconcile_findings', (s) => s.counters());
      if (!counters || counters['reconcile:finished_at_ms'] === undefined) return;
      this.reset();
      for (const kind of ['missing', 'extra', 'differing', 'matched']) this.set({ kind }, Number(counters[`reconcile:${kind}`] ?? 0));
    },
  });
  new Gauge({
    name: 'taxsync_reconcile_last_run_timestamp_seconds',
    help: 'When the last `taxsync reconcile` run finished (Unix time), from Redis at scrape time',
    registers: [registry],
    async collect() {
      const counters = await read('taxsync_reconcile_last_run_timestamp_seconds', (s) => s.counters());
      const ms = Number(counters?.['reconcile:finished_at_ms']);
      if (Number.isFinite(ms) && ms > 0) this.set(ms / 1000);
    },
  });

  return {
    registry,
    webhooks: new Counter({
      name: 'taxsync_webhooks_total',
      help: 'Webhook deliveries by platform (connector), connection and outcome (accepted, duplicate, ignored, invalid, unauthorized, wrong_shop, unavailable, …)',
      labelNames: ['connector', 'connection', 'outcome'],
      registers: [registry],
    }),
    events: new Counter({
      name: 'taxsync_events_received_total',
      help: 'Canonical events by platform (connector), connection and outcome (queued, stale, duplicate, rejected)',
      labelNames: ['connector', 'connection', 'outcome'],
      registers: [registry],
    }),
    vatSubmissions: new Counter({
      name: 'taxsync_vat_submissions_total',
      help: `VAT submission attempts by outcome (${VAT_SUBMISSION_OUTCOMES.join(', ')})`,
      labelNames: ['outcome'],
      registers: [registry],
    }),
    jobs,
    coalesced,
    apiCalls,
    apiCallDuration,
    responseDrift,
    idUnknown,
    unchanged,
    observeDrift: ({ endpoint, path }) => {
      // Paths come from the service's answers: bounded so a service inventing fields cannot grow the series without end.
      const series = `${endpoint}\0${path}`;
      if (!driftSeries.has(series) && driftSeries.size >= MAX_DRIFT_SERIES) {
        responseDrift.inc({ endpoint, path: '(other)' });
        return;
      }
      driftSeries.add(series);
      responseDrift.inc({ endpoint, path });
    },
    observeIdUnknown: (queue) => idUnknown.inc({ queue }),
    observeUnchanged: (queue) => unchanged.inc({ queue }),
    observeApiCall: (call) => {
      apiCalls.inc({ service: call.service, endpoint: call.endpoint, status: call.status });
      apiCallDuration.observe({ service: call.service, endpoint: call.endpoint }, call.seconds);
    },
    observeJob: (queue, outcome) => {
      jobs.inc({ queue, outcome });
      if (outcome === 'nothing-new') coalesced.inc({ queue });
    },
    watchQueues: (next) => {
      source = next;
    },
  };
}
