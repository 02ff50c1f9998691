/**
 * PURE: source silence. Per source, the age of the last event taxsync accepted from it; a source
 * that has sent before and is quiet for longer than the threshold is silent (its webhooks may be
 * off, failing at the platform, or pointing elsewhere).
 */
export interface SourceAge {
  source: string;
  last_event_at: string;
  age_s: number;
  silent: boolean;
}

/** `last`: source → epoch ms of its last accepted event (unreadable values are left out). Oldest first. */
export function sourceAges(last: Record<string, string>, now: Date, thresholdMs: number): SourceAge[] {
  return Object.entries(last)
    .map(([source, ms]) => ({ source, ms: Number(ms) }))
    .filter((s) => Number.isFinite(s.ms) && s.ms > 0)
    .map(({ source, ms }) => {
      const ageMs = Math.max(0, now.getTime() - ms);
      return { source, last_event_at: new Date(ms).toISOString(), age_s: Math.floor(ageMs / 1000), silent: ageMs > thresholdMs };
    })
    .sort((a, b) => b.age_s - a.age_s || a.source.localeCompare(b.source));
}
