import { describe, expect, it } from 'vitest';
import type { DeadLetterEntry } from '../../../src/queue/dead-letter.js';
import {
  describeFilter,
  describeTally,
  entrySubject,
  isEmptyFilter,
  matchesFilter,
  newestFirst,
  parseFilter,
  renderTable,
  tally,
} from '../../../src/dead-letters/filter.js';

function entry(over: Partial<DeadLetterEntry> & { id: string }): DeadLetterEntry {
  return {
    v: 1,
    queue: 'transactions',
    record: { kind: 'transaction', source: 'shopify', external_id: '561042' },
    event: null,
    error: { code: 'API_SERVER_ERROR', message: 'PUT /v1/transactions/ answered 500', retryable: true },
    http: null,
    attempts: 3,
    first_failed_at: '2026-11-21T02:40:00.000Z',
    last_failed_at: '2026-11-21T02:40:00.000Z',
    ...over,
  };
}

const worker = entry({ id: 'w1' });
const later = entry({ id: 'w2', last_failed_at: '2026-11-22T00:00:00.000Z', record: { kind: 'customer', source: 'api', external_id: 'C-1' }, queue: 'customers', error: { code: 'API_INVALID', message: 'bad email', retryable: false, fields: { email: ['is not valid'] } } });
const ingest = entry({
  id: 'i1',
  queue: 'ingest',
  record: null,
  error: { code: 'INVALID_PAYLOAD', message: 'updated_at: must be a date-time', retryable: false },
  raw: { connector: 'shopify', topic: 'customers/update', received_at: '2026-11-21T02:40:14.870Z', body: '{"email":"ada@example.com"}', body_truncated: false },
  attempts: 0,
  last_failed_at: '2026-11-21T03:00:00.000Z',
});
const all = [worker, later, ingest];

describe('dlq filters', () => {
  it('matches every entry without criteria', () => {
    const filter = parseFilter({});
    expect(isEmptyFilter(filter)).toBe(true);
    expect(all.filter((e) => matchesFilter(e, filter))).toHaveLength(3);
  });

  it('filters by queue, code (any case), source (record or connector) and external id', () => {
    expect(all.filter((e) => matchesFilter(e, parseFilter({ queue: 'customers' }))).map((e) => e.id)).toEqual(['w2']);
    expect(all.filter((e) => matchesFilter(e, parseFilter({ code: 'invalid_payload' }))).map((e) => e.id)).toEqual(['i1']);
    expect(all.filter((e) => matchesFilter(e, parseFilter({ source: 'shopify' }))).map((e) => e.id)).toEqual(['w1', 'i1']);
    expect(all.filter((e) => matchesFilter(e, parseFilter({ externalId: 'C-1' }))).map((e) => e.id)).toEqual(['w2']);
  });

  it('filters by time: since inclusive, until exclusive', () => {
    const f = parseFilter({ since: '2026-11-21T03:00:00Z', until: '2026-11-22T00:00:00Z' });
    expect(all.filter((e) => matchesFilter(e, f)).map((e) => e.id)).toEqual(['i1']);
    expect(all.filter((e) => matchesFilter(e, parseFilter({ since: '2026-11-22' }))).map((e) => e.id)).toEqual(['w2']);
  });

  it('searches text anywhere, case-insensitively (field errors, raw bodies)', () => {
    expect(all.filter((e) => matchesFilter(e, parseFilter({ text: 'IS NOT VALID' }))).map((e) => e.id)).toEqual(['w2']);
    expect(all.filter((e) => matchesFilter(e, parseFilter({ text: 'ada@example' }))).map((e) => e.id)).toEqual(['i1']);
  });

  it('refuses bad times with a one-line reason', () => {
    expect(() => parseFilter({ since: 'yesterday' })).toThrow(/--since must be an ISO 8601/);
    expect(() => parseFilter({ until: '2026-11-21T02:00:00' })).toThrow(/--until/);
    expect(() => parseFilter({ since: '2026-11-22', until: '2026-11-21' })).toThrow(/before --until/);
  });

  it('describes a filter for the audit log', () => {
    expect(describeFilter(parseFilter({ code: 'api_invalid', since: '2026-11-21', text: 'x' }))).toEqual({
      code: 'API_INVALID',
      since: '2026-11-21T00:00:00.000Z',
      text: 'x',
    });
  });
});

describe('dlq plans and tables', () => {
  it('sorts newest first', () => {
    expect([...all].sort(newestFirst).map((e) => e.id)).toEqual(['w2', 'i1', 'w1']);
  });

  it('tallies by queue and code', () => {
    const t = tally(all);
    expect(t).toEqual({
      total: 3,
      by_queue: { transactions: 1, customers: 1, ingest: 1 },
      by_code: { API_SERVER_ERROR: 1, API_INVALID: 1, INVALID_PAYLOAD: 1 },
    });
    expect(describeTally(t)).toBe('3 entries (customers 1, ingest 1, transactions 1; API_INVALID 1, API_SERVER_ERROR 1, INVALID_PAYLOAD 1)');
    expect(describeTally(tally([]))).toBe('0 entries');
  });

  it('names the subject and renders a padded table', () => {
    expect(entrySubject(worker)).toBe('transaction shopify/561042');
    expect(entrySubject(ingest)).toBe('shopify customers/update');
    expect(renderTable(['a', 'bb'], [['xxx', 'y']])).toBe('a    bb\nxxx  y');
  });
});
