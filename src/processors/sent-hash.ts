import { createHash } from 'node:crypto';

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
