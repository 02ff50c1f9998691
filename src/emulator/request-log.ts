import { performance } from 'node:perf_hooks';
import type { RecordRef } from './answer.js';

/**
 * Every API request the emulator received, with real start and end times (not the business
 * clock, which tests may freeze), so tests can see overlapping requests for one record.
 */
export interface RequestLogEntry {
  id: number;
  method: string;
  path: string;
  /** Endpoint name (contract/endpoints.ts), null for an unknown route. */
  endpoint: string | null;
  record: RecordRef | null;
  /** The client whose bearer token the request carried, once checked (null: none or rejected). */
  client_id: string | null;
  /** The status answered, or that would have been answered when the connection was dropped. */
  status: number | null;
  /** `aborted`: the client went away before the answer (the handler may still have run). */
  outcome: 'in_flight' | 'answered' | 'dropped' | 'aborted';
  /** Fault kinds that fired. */
  faults: string[];
  started_at: string;
  ended_at: string | null;
  /** Milliseconds since the epoch, sub-millisecond precision. */
  start_ms: number;
  end_ms: number | null;
}

export interface RequestLog {
  start(method: string, path: string, endpoint: string | null): RequestLogEntry;
  finish(entry: RequestLogEntry, status: number | null, outcome: 'answered' | 'dropped' | 'aborted'): void;
  entries(): RequestLogEntry[];
  clear(): void;
}

const preciseNow = () => performance.timeOrigin + performance.now();

export function createRequestLog(limit: number): RequestLog {
  let next = 1;
  let entries: RequestLogEntry[] = [];
  return {
    start(method, path, endpoint) {
      const start = preciseNow();
      const entry: RequestLogEntry = {
        id: next++,
        method,
        path,
        endpoint,
        record: null,
        client_id: null,
        status: null,
        outcome: 'in_flight',
        faults: [],
        started_at: new Date(start).toISOString(),
        ended_at: null,
        start_ms: start,
        end_ms: null,
      };
      entries.push(entry);
      if (entries.length > limit) entries = entries.slice(entries.length - limit);
      return entry;
    },
    finish(entry, status, outcome) {
      if (entry.outcome !== 'in_flight') return;
      const end = preciseNow();
      entry.status = status;
      entry.outcome = outcome;
      entry.end_ms = end;
      entry.ended_at = new Date(end).toISOString();
    },
    entries: () => entries.map((e) => ({ ...e, faults: [...e.faults] })),
    clear() {
      entries = [];
    },
  };
}
