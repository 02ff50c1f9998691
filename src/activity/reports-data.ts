import type { ConnectionAge } from './silence.js';
import type { VarianceEntry } from '../variance/store.js';

/**
 * What the web view's reports show (src/http/admin/reports-view.ts renders it): read here, in the
 * activity room, so the data side never imports the http room.
 */

export interface Series {
  name: string;
  values: readonly number[];
}

export interface ChartInput {
  title: string;
  /** Bucket start times (epoch ms), oldest first; every series has one value per bucket. */
  buckets: readonly number[];
  series: readonly Series[];
}

export interface ReportsData {
  /** Per connection: the last event, silent or not (silence.ts). */
  connections: ConnectionAge[];
  silenceS: number;
  variances: { total: number; entries: VarianceEntry[] };
  events: ChartInput;
  deadLetters: ChartInput;
}
