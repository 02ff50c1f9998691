import { createHash, timingSafeEqual } from 'node:crypto';
import type { Operator } from '../../config/index.js';

export type { Operator } from '../../config/index.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Equal strings, compared in the same time whatever is presented (hashing first gives equal lengths). */
export function sameBytes(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The operator whose token `presented` is. Every operator is compared, without stopping at a
 * match, so the time taken does not say which one (or whether any) matched.
 */
export function operatorFor(operators: readonly Operator[], presented: string): Operator | undefined {
  let found: Operator | undefined;
  for (const operator of operators) if (sameBytes(presented, operator.token.reveal()) && found === undefined) found = operator;
  return found;
}

/**
 * What a session remembers of the token it was issued for: a hash, so a rotated token (a restart
 * with a new value) invalidates every session issued for the old one, and Redis never holds a token.
 */
export function tokenFingerprint(operator: Operator): string {
  return createHash('sha256').update(`taxsync-admin-session:${operator.token.reveal()}`).digest('base64url');
}
