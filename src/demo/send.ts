import { z } from 'zod';
import { CONNECTORS } from '../connectors/registry.js';
import type { DemoConnection, DemoDelivery } from './samples.js';

/** The HTTP side of `taxsync demo`: which daemon it talks to, and each signed delivery it posts there. */

/** Thrown when the demo cannot run at all (no daemon, not the emulator, a delivery refused). */
export class DemoRefused extends Error {
  override readonly name = 'DemoRefused';
}

const Health = z.looseObject({
  status: z.string(),
  api: z.union([z.looseObject({ kind: z.string(), url: z.string().optional() }), z.string()]).optional(),
});

/** The emulator URL the daemon reports, or a refusal saying why the demo will not run against it. */
export async function emulatorOf(daemonUrl: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${daemonUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new DemoRefused(`no taxsync daemon answers at ${daemonUrl} (${why}): start one with \`taxsync start\`, or pass --url`);
  }
  const parsed = Health.safeParse(await response.json().catch(() => undefined));
  if (!response.ok || !parsed.success) {
    throw new DemoRefused(`${daemonUrl}/healthz answered ${response.status} without a taxsync health report: is this a taxsync daemon?`);
  }
  const api = parsed.data.api;
  // Daemons before this report said `"api": "built-in emulator"`, without the emulator's URL.
  const emulator = typeof api === 'string' ? /emulator/.test(api) : api?.kind === 'emulator';
  if (!emulator) {
    throw new DemoRefused(
      `the daemon at ${daemonUrl} sends to a configured tax engine (TAX_API_URL is set), not the built-in emulator: the demo never sends sample data to a real tax engine`,
    );
  }
  const url = typeof api === 'object' ? api.url : undefined;
  if (url === undefined) {
    throw new DemoRefused(
      `the daemon at ${daemonUrl} does not report the URL of its built-in emulator (is it \`taxsync serve\`, or an older version?): run the demo against \`taxsync start\` of this version with TAX_API_URL unset`,
    );
  }
  return url.replace(/\/+$/, '');
}

export interface SentDelivery {
  connection: string;
  platform: string;
  topic: string;
  status: number;
  accepted: number;
}

/**
 * Posts one delivery to its connection's route, signed with the connection's secret. Any answer
 * but 202 refuses the whole demo, as a 404 (a connection the daemon does not have) always did:
 * the demo and the daemon read one configuration, so a difference is worth stopping for.
 */
export async function sendDelivery(daemonUrl: string, delivery: DemoDelivery, connection: DemoConnection, now: Date): Promise<SentDelivery> {
  const raw = Buffer.from(JSON.stringify(delivery.body));
  const headers = { 'content-type': 'application/json', ...delivery.headers, ...CONNECTORS[connection.platform]!.sign(raw, connection.secret, now) };
  const what = `${connection.id} ${delivery.topic}`;
  let response: Response;
  try {
    response = await fetch(`${daemonUrl}/webhooks/${encodeURIComponent(connection.id)}`, { method: 'POST', body: raw, headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new DemoRefused(`${what}: the daemon at ${daemonUrl} did not answer (${(error as Error).message})`);
  }
  const text = await response.text();
  const body = (() => {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      return {};
    }
  })();
  const sameConfiguration = "run the demo in the daemon's folder with the daemon's environment";
  if (response.status === 401) {
    throw new DemoRefused(`${what}: the daemon refused the signature (401): the demo signs with ${connection.secretFrom}; ${sameConfiguration}`);
  }
  if (response.status === 404) {
    throw new DemoRefused(`${what}: the daemon takes no webhooks for connection "${connection.id}" (404): ${sameConfiguration} (TAXSYNC_CONNECTIONS, the *_WEBHOOK_SECRET variables)`);
  }
  if (response.status !== 202) throw new DemoRefused(`${what}: the daemon answered ${response.status} ${text.slice(0, 200)}`);
  if (typeof body.dead_lettered === 'number' && body.dead_lettered > 0) {
    throw new DemoRefused(`${what}: the daemon dead-lettered the sample as INVALID_PAYLOAD (a taxsync bug: the samples should always parse)`);
  }
  return { connection: connection.id, platform: connection.platform, topic: delivery.topic, status: response.status, accepted: typeof body.accepted === 'number' ? body.accepted : 0 };
}
