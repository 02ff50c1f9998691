import { Pool } from 'undici';

export interface Request {
  body: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  /** Answers by status code. */
  statuses: Map<number, number>;
  elapsedMs: number;
}

/** POSTs every request to `url`+`path` with `connections` requests in flight over keep-alive connections. */
export async function postAll(url: string, path: string, requests: readonly Request[], connections: number): Promise<LoadResult> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < requests.length) {
      const req = requests[next++]!;
      const res = await pool.request({ method: 'POST', path, body: req.body, headers: req.headers });
      await res.body.dump();
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  const elapsedMs = performance.now() - started;
  await pool.close();
  return { statuses, elapsedMs };
}

/**
 * POSTs at a steady `rate` per second (a request every 1/rate s, whatever the answers) and calls
 * `accepted(i, at)` with the time each 2xx answer arrived.
 */
export async function postSteady(
  url: string,
  path: string,
  requests: readonly Request[],
  rate: number,
  accepted: (i: number, at: number) => void,
): Promise<LoadResult> {
  const pool = new Pool(url, { connections: 64, pipelining: 1 });
  const statuses = new Map<number, number>();
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < requests.length; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const req = requests[i]!;
    inFlight.push(
      pool.request({ method: 'POST', path, body: req.body, headers: req.headers }).then(async (res) => {
        await res.body.dump();
        if (res.statusCode < 300) accepted(i, performance.now());
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }),
    );
  }
  await Promise.all(inFlight);
  const elapsedMs = performance.now() - started;
  await pool.close();
  return { statuses, elapsedMs };
}

/** Percentile p (0–100) of `values` (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
