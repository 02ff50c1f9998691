import { ERROR_CODES, type ErrorCode } from '../domain/errors.js';
import type { RedisClient } from '../queue/connection.js';
import type { DeadLetterStore } from '../queue/dead-letter.js';
import type { Keys } from '../queue/keys.js';
import type { ReportsData } from './reports-data.js';
import type { VarianceStore } from '../variance/store.js';
import type { Connections } from '../config/connection-list.js';
import { connectionAges } from './silence.js';
import { HOUR_MS, eventsPerHour, hourStart, lastEvents } from './store.js';

/** Hours the web view's plots cover. */
export const PLOT_HOURS = 12;

const classOf = (code: string) => (Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode].errorClass : 'other');

/** Per bucket, counts per name → one series per name (names sorted), zero where a bucket has none. */
function seriesOf(buckets: { counts: Record<string, number> }[]) {
  const names = [...new Set(buckets.flatMap((b) => Object.keys(b.counts)))].sort();
  return names.map((name) => ({ name, values: buckets.map((b) => b.counts[name] ?? 0) }));
}

/**
 * What the web view shows above the dead letters: connection silence, events per connection and
 * dead letters per class by hour, tax variances. `connections`: the installation's, to list each
 * with its platform, source and prefix (without them, only the connections that sent, by id).
 */
export async function readReports(deps: {
  redis: RedisClient;
  keys: Pick<Keys, 'prefix'>;
  deadLetters: Pick<DeadLetterStore, 'all'>;
  variances: Pick<VarianceStore, 'list'>;
  silenceMs: number;
  connections: Connections;
  now?: Date;
}): Promise<ReportsData> {
  const now = deps.now ?? new Date();
  const events = await eventsPerHour(deps.redis, deps.keys, PLOT_HOURS, now.getTime(), deps.connections);
  const first = events[0]!.hour;
  const dead: { hour: number; counts: Record<string, number> }[] = events.map((e) => ({ hour: e.hour, counts: {} }));
  for await (const entry of deps.deadLetters.all()) {
    const at = Date.parse(entry.last_failed_at);
    if (!(at >= first)) continue;
    const bucket = dead[Math.min(dead.length - 1, Math.floor((hourStart(at) - first) / HOUR_MS))]!;
    const name = classOf(entry.error.code);
    bucket.counts[name] = (bucket.counts[name] ?? 0) + 1;
  }
  const buckets = events.map((e) => e.hour);
  return {
    connections: connectionAges(await lastEvents(deps.redis, deps.keys), deps.connections, now, deps.silenceMs),
    silenceS: Math.floor(deps.silenceMs / 1000),
    variances: await deps.variances.list({ limit: 20 }),
    events: { title: `Events accepted per connection, last ${PLOT_HOURS} hours (UTC)`, buckets, series: seriesOf(events) },
    deadLetters: { title: `Dead letters per error class, last ${PLOT_HOURS} hours (UTC)`, buckets, series: seriesOf(dead) },
  };
}
