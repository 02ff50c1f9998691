import { createHash } from 'node:crypto';
import type { HandlerContext, HandlerOutcome } from './types.js';

/**
 * A hash of a request body, the same whatever order its keys were built in: kept per record as
 * `sent_hash` once the service accepted the body, so a body already held there is known without
 * asking the service (whose answers vary in ways that say nothing about what it holds).
 */
export function sentHash(body: unknown): string {
  const canonical = JSON.stringify(body, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return createHash('sha256').update(canonical).digest('base64url');
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
