import { createHash } from 'node:crypto';
import type { HandlerContext, HandlerOutcome } from './types.js';

/**
 * A hash of a request body, the same whatever order its keys were built in: kept per record as
 * `sent_hash` once the service accepted the body, so a body already held there is known without
 * asking the service (whose answers vary in ways that say nothing about what it holds).
 */
export function sentHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url');
}

/**
 * JSON with every object's keys sorted, written directly: it runs for every write on the hot path,
 * where rebuilding sorted copies of each object for JSON.stringify cost about 2% of a sync worker's
 * CPU. Values JSON.stringify would drop (undefined, functions) are dropped the same way.
 */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined || typeof v === 'function' ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return canonicalJson((value as { toJSON(): unknown }).toJSON());
  const record = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(record).sort()) {
    const v = record[key];
    if (v === undefined || typeof v === 'function') continue;
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `{${out}}`;
}

/**
 * Skip unchanged (docs/performance.md): the outcome of a write whose body is the one the service
 * last accepted for this record, so no call is made; undefined when the body must be sent (it
 * differs, or nothing is known to be accepted: a replay and `taxsync resend` clear the hash, so they
 * always send).
 */
export function unchanged(ctx: Pick<HandlerContext, 'state'>, hash: string, what: string): Extract<HandlerOutcome, { kind: 'done' }> | undefined {
  if (ctx.state.sentHash === undefined || ctx.state.sentHash !== hash) return undefined;
  return { kind: 'done', unchanged: true, sentHash: hash, detail: `nothing sent: the ${what} body is the one last accepted` };
}
