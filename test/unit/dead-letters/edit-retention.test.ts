import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/config/settings.js';
import type { DeadLetterEntry } from '../../../src/queue/dead-letter.js';
import { patchPaths, planEdit } from '../../../src/dead-letters/edit.js';
import { selectExpired } from '../../../src/dead-letters/retention.js';

const event = {
  v: 1,
  id: 'evt-1',
  occurred_at: '2026-11-20T10:00:00.000Z',
  connector: 'test',
  record: { kind: 'customer', source: 'api', external_id: 'c-1' },
  type: 'customer.upserted',
  data: { name: 'Ann', email: 'a@example.com' },
};

function entry(id: string, lastFailedAt = '2026-11-21T00:00:00.000Z', extra: Partial<DeadLetterEntry> = {}): DeadLetterEntry {
  return {
    id,
    v: 1,
    queue: 'customers',
    record: { kind: 'customer', source: 'api', external_id: 'c-1' },
    event,
    error: { code: 'API_INVALID', message: 'bad', retryable: false },
    http: null,
    attempts: 1,
    first_failed_at: lastFailedAt,
    last_failed_at: lastFailedAt,
    ...extra,
  };
}

const options = { settings: DEFAULT_SETTINGS, actor: 'ann', now: new Date('2026-11-21T12:00:00.000Z') };

describe('planEdit', () => {
  it('merges into the event, keeps the original, counts edits', () => {
    const plan = planEdit(entry('e'), { data: { email: null, name: 'Bo' } }, options);
    expect(plan.entry.event).toMatchObject({ id: 'evt-1', data: { name: 'Bo' } });
    expect((plan.entry.event as { data: object }).data).not.toHaveProperty('email');
    expect(plan.entry.event_original).toEqual(event);
    expect(plan.entry.edited).toEqual({ at: '2026-11-21T12:00:00.000Z', actor: 'ann', count: 1 });
    expect(plan.paths).toEqual(['data.email', 'data.name']);
    const again = planEdit(plan.entry, { data: { name: 'Cy' } }, options);
    expect(again.entry.event_original).toEqual(event);
    expect(again.entry.edited?.count).toBe(2);
  });

  it.each([
    [{ id: 'x' }, /changes the event's id/],
    [{ record: { source: 'shopify' } }, /changes the event's record/],
    [{ record: null }, /changes the event's record/],
    [{ occurred_at: '2026-11-20T11:00:00.000Z' }, /changes the event's occurred_at/],
    [{ type: 'invoice.upserted' }, /not a valid canonical event/],
    [{ data: { unknown_field: 1 } }, /not a valid canonical event/],
    [[1], /must be a JSON object/],
    [{}, /empty/],
  ])('refuses %j', (patch, reason) => {
    expect(() => planEdit(entry('e'), patch, options)).toThrow(reason);
  });

  it('refuses a kept delivery whose body was cut or is not JSON', () => {
    const raw = { connector: 'shopify', received_at: options.now.toISOString(), body: 'a=b', body_truncated: false };
    expect(() => planEdit(entry('e', undefined, { record: null, event: null, raw }), { a: 1 }, options)).toThrow(/not JSON/);
    expect(() => planEdit(entry('e', undefined, { record: null, event: null, raw: { ...raw, body: '{}', body_truncated: true } }), { a: 1 }, options)).toThrow(/cut/);
  });

  it('names the paths a patch touches', () => {
    expect(patchPaths({ a: { b: 1, c: { d: null } }, e: [], f: {} })).toEqual(['a.b', 'a.c.d', 'e', 'f']);
  });
});

describe('selectExpired', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  const day = (n: number) => new Date(now.getTime() - n * 86_400_000).toISOString();
  const entries = [entry('d3', day(3)), entry('d1', day(1)), entry('d40', day(40)), entry('d2', day(2))];

  it('keeps everything by default', () => {
    expect(selectExpired(entries, { maxEntries: 0, maxAgeDays: 0 }, now)).toEqual([]);
  });
  it('removes by age (last failure) and the oldest beyond the cap', () => {
    expect(selectExpired(entries, { maxEntries: 0, maxAgeDays: 30 }, now).map((e) => [e.entry.id, e.reason])).toEqual([['d40', 'max-age']]);
    expect(selectExpired(entries, { maxEntries: 2, maxAgeDays: 0 }, now).map((e) => [e.entry.id, e.reason])).toEqual([
      ['d3', 'max-entries'],
      ['d40', 'max-entries'],
    ]);
    expect(selectExpired(entries, { maxEntries: 3, maxAgeDays: 30 }, now).map((e) => e.entry.id)).toEqual(['d40']);
  });
});
