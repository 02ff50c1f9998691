import { createHash } from 'node:crypto';

/** Helpers of the connectors' demo samples (`<id>/demo.ts`): a pure function of the run id and the time. */

/** A UUID-shaped id derived from the run, so the samples are a pure function of run and time. */
export function uuidFrom(run: string, label: string): string {
  const hex = createHash('sha256').update(`${run}:${label}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const iso = (at: Date): string => at.toISOString();
export const unix = (at: Date): number => Math.floor(at.getTime() / 1000);
/** WooCommerce `*_gmt`: UTC without a zone designator. */
export const gmt = (at: Date): string => at.toISOString().slice(0, 19);
export const before = (now: Date, minutes: number): Date => new Date(now.getTime() - minutes * 60_000);
