import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { fixture, startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

const ORDER = fixture('shopify/orders-create-discounts-shipping-taxes.json');

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reading of the text format: every sample belongs to a family announced by one HELP and
 * one TYPE, no family appears twice, histograms and summaries only add their own suffixes.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const seenSamples = new Set<string>();
  let current: string | undefined;
  const closed = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, 'HELP' | 'TYPE', string, string];
      if (current !== undefined && current !== name) closed.add(current);
      if (closed.has(name)) throw new Error(`family ${name} appears twice`);
      current = name;
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`two HELP lines for ${name}`);
        helps.add(name);
      } else {
        if (types.has(name)) throw new Error(`two TYPE lines for ${name}`);
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`bad TYPE ${line}`);
        types.set(name, rest);
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText = '', valueText] = sample as unknown as [string, string, string | undefined, string];
    const suffixes = types.get(current ?? '') === 'histogram' ? ['_bucket', '_sum', '_count'] : types.get(current ?? '') === 'summary' ? ['_sum', '_count'] : [];
    if (current === undefined || !(name === current || suffixes.some((s) => name === current + s))) {
      throw new Error(`sample ${name} outside its family (current: ${current})`);
    }
    if (!helps.has(current) || !types.has(current)) throw new Error(`family ${current} lacks HELP or TYPE`);
    const labels: Record<string, string> = {};
    for (const match of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[match[1]!] = match[2]!;
    const value = Number(valueText === '+Inf' ? Infinity : valueText);
    if (Number.isNaN(value) && valueText !== 'NaN') throw new Error(`bad value in ${line}`);
    if (seenSamples.has(`${name}{${labelText}}`)) throw new Error(`duplicate sample ${name}{${labelText}}`);
    seenSamples.add(`${name}{${labelText}}`);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

describe('GET /metrics', () => {
  const ctx = useRedis();
  let daemon: Daemon;

  beforeEach(async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: { TAXSYNC_MAX_ATTEMPTS: '2' } });
  });
  afterEach(async () => {
    await daemon.stop();
  });

  it('is one valid exposition with API calls, job outcomes, queue gauges, dead letters and stale drops', async () => {
    const order = ORDER.body as Record<string, unknown>;
    const headers = (id: string) => ({ ...ORDER.headers, 'x-shopify-topic': 'orders/updated', 'x-shopify-event-id': id, 'x-shopify-webhook-id': id });
    // Created, then updated: the tax engine answers 201 then 200.
    expect((await daemon.post('shopify', { ...order, updated_at: '2026-11-20T05:10:00-05:00' }, headers('m-1'))).status).toBe(202);
    await eventually(async () => daemon.emulator.requestLog.entries().some((e) => e.endpoint === 'transactions.upsert') && (await daemon.idle()));
    expect((await daemon.post('shopify', { ...order, updated_at: '2026-11-20T05:20:00-05:00' }, headers('m-2'))).status).toBe(202);
    await eventually(async () => daemon.emulator.requestLog.entries().filter((e) => e.endpoint === 'transactions.upsert').length === 2 && (await daemon.idle()));
    // An older version arrives late: dropped as stale.
    expect(await (await daemon.post('shopify', ORDER.body, ORDER.headers)).json()).toMatchObject({ stale: 1 });
    // A customer the engine keeps failing: retried once, then dead-lettered.
    daemon.emulator.faults.add({ kind: 'error', route: 'customers.upsert', status: 500 });
    expect((await daemon.post('erp', erpCustomer('C-METRICS', 1))).status).toBe(202);
    await eventually(async () => (await createDeadLetterStore(daemon.queues['dead-letter']).count()) === 1 && (await daemon.idle()));

    const res = await fetch(`${daemon.webhookUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const { types, samples } = parseExposition(await res.text());
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

    expect(Object.fromEntries(['taxsync_jobs_total', 'taxsync_api_calls_total', 'taxsync_api_call_duration_seconds', 'taxsync_queue_jobs', 'taxsync_queue_oldest_waiting_seconds', 'taxsync_dead_letter_entries', 'taxsync_stale_events_total', 'taxsync_coalesced_events_total', 'taxsync_events_received_total'].map((n) => [n, types.get(n)]))).toEqual({
      taxsync_jobs_total: 'counter',
      taxsync_api_calls_total: 'counter',
      taxsync_api_call_duration_seconds: 'histogram',
      taxsync_queue_jobs: 'gauge',
      taxsync_queue_oldest_waiting_seconds: 'gauge',
      taxsync_dead_letter_entries: 'gauge',
      taxsync_stale_events_total: 'counter',
      taxsync_coalesced_events_total: 'counter',
      taxsync_events_received_total: 'counter',
    });

    // API calls are labelled by endpoint name, never by a URL.
    expect(value('taxsync_api_calls_total', { service: 'tax', endpoint: 'transactions.upsert', status: '201' })).toBe(1);
    expect(value('taxsync_api_calls_total', { service: 'tax', endpoint: 'transactions.upsert', status: '200' })).toBe(1);
    expect(value('taxsync_api_calls_total', { service: 'tax', endpoint: 'customers.upsert', status: '500' })).toBe(2);
    expect(value('taxsync_api_calls_total', { service: 'auth', endpoint: 'auth.token', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(samples.filter((s) => s.name === 'taxsync_api_calls_total').every((s) => !s.labels.endpoint!.includes('/'))).toBe(true);
    expect(value('taxsync_api_call_duration_seconds_count', { endpoint: 'transactions.upsert' })).toBe(2);
    expect(value('taxsync_api_call_duration_seconds_bucket', { endpoint: 'transactions.upsert', le: '+Inf' })).toBe(2);
    expect(value('taxsync_api_call_duration_seconds_sum', { endpoint: 'transactions.upsert' })).toBeGreaterThan(0);

    // Job outcomes.
    expect(value('taxsync_jobs_total', { queue: 'transactions', outcome: 'applied' })).toBe(2);
    expect(value('taxsync_jobs_total', { queue: 'customers', outcome: 'retried' })).toBe(1);
    expect(value('taxsync_jobs_total', { queue: 'customers', outcome: 'dead-lettered' })).toBe(1);
    expect(value('taxsync_coalesced_events_total')).toBe(value('taxsync_jobs_total', { outcome: 'nothing-new' }));

    // Read from Redis at scrape time.
    for (const queue of ['customers', 'transactions', 'vat-submissions']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) {
        expect(samples.filter((s) => s.name === 'taxsync_queue_jobs' && s.labels.queue === queue && s.labels.state === state)).toHaveLength(1);
      }
      expect(samples.filter((s) => s.name === 'taxsync_queue_oldest_waiting_seconds' && s.labels.queue === queue)).toHaveLength(1);
    }
    expect(value('taxsync_queue_jobs', { state: 'waiting' })).toBe(0);
    expect(value('taxsync_queue_oldest_waiting_seconds')).toBe(0);
    expect(value('taxsync_dead_letter_entries')).toBe(1);
    expect(value('taxsync_stale_events_total')).toBe(1);
    expect(value('taxsync_events_received_total', { connector: 'shopify', outcome: 'stale' })).toBe(1);
  });
});
