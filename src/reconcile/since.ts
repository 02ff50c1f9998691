/**
 * PURE: `--since` of `taxsync reconcile` (and later `backfill`): an ISO date or date-time, or an
 * age back from now — `90m`, `6h`, `7d`.
 */
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseSince(text: string, now: Date): Date {
  const trimmed = text.trim();
  const age = /^(\d{1,6})([mhd])$/.exec(trimmed);
  if (age) return new Date(now.getTime() - Number(age[1]) * UNIT_MS[age[2]!]!);
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const day = new Date(`${trimmed}T00:00:00Z`);
    if (!Number.isNaN(day.getTime()) && day.toISOString().startsWith(trimmed)) return day;
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(trimmed)) {
    const time = new Date(trimmed);
    if (!Number.isNaN(time.getTime())) return time;
  }
  throw new Error(`--since ${JSON.stringify(text)} is neither a date (2026-11-01), a date-time with a zone (2026-11-01T08:00:00Z) nor an age (90m, 6h, 7d)`);
}
