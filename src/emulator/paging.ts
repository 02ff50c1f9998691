import { PAGE_LIMIT_DEFAULT as DEFAULT_PAGE_LIMIT, PAGE_LIMIT_MAX as MAX_PAGE_LIMIT } from './contract/endpoints.js';
import type { FieldErrors } from './contract/primitives.js';
import type { Entry } from './store.js';

/**
 * Cursor paging of the tax engine lists. A cursor is an opaque token for a record's insertion
 * sequence number, so pages stay stable while records are added or deleted: `after` gives the
 * records inserted after that one, `before` the ones inserted before it (the nearest `limit`).
 */

/** "cursors: after, before (string or null), has_next, has_previous, limit" (tax-calculation-api.md). */
export interface Cursors {
  after: string | null;
  before: string | null;
  has_next: boolean;
  has_previous: boolean;
  limit: number;
}

const PREFIX = 'seq:';

export function encodeCursor(seq: number): string {
  return Buffer.from(`${PREFIX}${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(PREFIX)) return undefined;
  const digits = text.slice(PREFIX.length);
  return /^\d{1,15}$/.test(digits) ? Number(digits) : undefined;
}

export interface PageQuery {
  limit: number;
  after?: number;
  before?: number;
  /** The cursors as sent, echoed when a page is empty. */
  rawAfter?: string;
  rawBefore?: string;
}

type RawQuery = Record<string, unknown>;

/** Reads `limit`, `after`, `before`; anything else, a bad limit or a foreign cursor is a field error. */
export function parsePageQuery(raw: RawQuery): { ok: true; query: PageQuery } | { ok: false; fields: FieldErrors } {
  const fields: FieldErrors = {};
  const query: PageQuery = { limit: DEFAULT_PAGE_LIMIT };
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string') {
      fields[name] = [`${name} must be given once`];
      continue;
    }
    if (name === 'limit') {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE_LIMIT) {
        fields.limit = [`limit must be a whole number from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}); got ${value}`];
      } else {
        query.limit = Number(value);
      }
    } else if (name === 'after' || name === 'before') {
      const seq = decodeCursor(value);
      if (seq === undefined) fields[name] = [`${name} must be a cursor from a previous page's cursors.${name}`];
      else if (name === 'after') Object.assign(query, { after: seq, rawAfter: value });
      else Object.assign(query, { before: seq, rawBefore: value });
    } else {
      fields[name] = [`unknown query parameter ${name}: the list takes limit, after and before`];
    }
  }
  if (query.after !== undefined && query.before !== undefined) {
    fields.before = ['send after or before, not both'];
  }
  return Object.keys(fields).length > 0 ? { ok: false, fields } : { ok: true, query };
}

/** One page of `entries` (live, in insertion order). */
export function cursorPage<T, R>(entries: readonly Entry<T>[], query: PageQuery, render: (value: T) => R): { data: R[]; cursors: Cursors } {
  let start: number;
  let end: number;
  if (query.after !== undefined) {
    const after = query.after;
    start = entries.findIndex((e) => e.seq > after);
    if (start === -1) start = entries.length;
    end = Math.min(entries.length, start + query.limit);
  } else if (query.before !== undefined) {
    const before = query.before;
    end = entries.findIndex((e) => e.seq >= before);
    if (end === -1) end = entries.length;
    start = Math.max(0, end - query.limit);
  } else {
    start = 0;
    end = Math.min(entries.length, query.limit);
  }
  const slice = entries.slice(start, end);
  const first = slice[0];
  const last = slice[slice.length - 1];
  return {
    data: slice.map((e) => render(e.value)),
    cursors: {
      after: last === undefined ? (query.rawAfter ?? null) : encodeCursor(last.seq),
      before: first === undefined ? (query.rawBefore ?? null) : encodeCursor(first.seq),
      has_next: end < entries.length,
      has_previous: start > 0,
      limit: query.limit,
    },
  };
}
