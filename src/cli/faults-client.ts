import { z } from 'zod';

/**
 * `taxsync faults`: the fault rules of an emulator, through its control API (`/__emulator/faults`,
 * docs/emulator.md "Faults"). The emulator validates a rule and answers 400 with the field in
 * error; this side only carries the rule there and reads the answer.
 */

const FaultState = z.looseObject({
  kind: z.string(),
  route: z.string(),
  rate: z.number().optional(),
  times: z.number().optional(),
  status: z.number().optional(),
  retry_after_s: z.number().optional(),
  ms: z.number().optional(),
  phase: z.string().optional(),
  fired: z.number().optional(),
});
export type FaultState = z.infer<typeof FaultState>;

const FaultList = z.looseObject({ seed: z.number().optional(), rules: z.array(FaultState) });
export type FaultList = z.infer<typeof FaultList>;

export interface FaultInput {
  kind: string;
  route: string;
  rate?: number;
  times?: number;
  status?: number;
  retry_after_s?: number;
  ms?: number;
  phase?: string;
}

async function call(emulatorUrl: string, method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<unknown> {
  const url = `${emulatorUrl.replace(/\/+$/, '')}/__emulator/faults`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      signal: AbortSignal.timeout(10_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new Error(`the emulator at ${emulatorUrl} does not answer (${cause})`);
  }
  const text = await response.text();
  if (response.status === 404) throw new Error(`the emulator at ${emulatorUrl} has no control API (is it \`taxsync emulator\` without --control, or not an emulator?)`);
  if (response.status === 400) {
    let details = text;
    try {
      const parsed = JSON.parse(text) as { details?: Record<string, string[]> };
      if (parsed.details) details = Object.entries(parsed.details).map(([field, messages]) => `${field}: ${messages.join('; ')}`).join(', ');
    } catch {
      // not JSON: the text says it
    }
    throw new Error(`the emulator refused the fault rule: ${details}`);
  }
  if (!response.ok) throw new Error(`the emulator at ${emulatorUrl} answered ${response.status} ${text.slice(0, 200)}`);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

function parseList(value: unknown, emulatorUrl: string): FaultList {
  const parsed = FaultList.safeParse(value);
  if (!parsed.success) throw new Error(`the emulator at ${emulatorUrl} answered an unexpected fault list`);
  return parsed.data;
}

export async function addFault(emulatorUrl: string, rule: FaultInput): Promise<FaultList> {
  const clean = Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined));
  return parseList(await call(emulatorUrl, 'POST', clean), emulatorUrl);
}

export async function listFaults(emulatorUrl: string): Promise<FaultList> {
  return parseList(await call(emulatorUrl, 'GET'), emulatorUrl);
}

export async function clearFaults(emulatorUrl: string): Promise<void> {
  await call(emulatorUrl, 'DELETE');
}

/** One line per rule: what fires, where, how often, how many times it fired. */
export function describeFault(rule: FaultState): string {
  const what =
    rule.kind === 'error'
      ? `answer ${rule.status ?? 500}${rule.retry_after_s === undefined ? '' : ` with Retry-After ${rule.retry_after_s} s`}`
      : rule.kind === 'rate_limit'
        ? `answer 429 with Retry-After ${rule.retry_after_s ?? 1} s`
        : rule.kind === 'latency'
          ? `wait ${rule.ms ?? 0} ms ${rule.phase === 'after' ? 'after processing' : 'before processing'}`
          : rule.kind === 'drop'
            ? 'process, then drop the connection without an answer'
            : rule.kind === 'expire_token'
              ? 'expire the presented token (401)'
              : rule.kind;
  const how = [
    rule.rate !== undefined && rule.rate < 1 ? `${rule.rate * 100}% of requests` : 'every request',
    rule.times === undefined ? undefined : `at most ${rule.times} time${rule.times === 1 ? '' : 's'}`,
  ]
    .filter(Boolean)
    .join(', ');
  return `${rule.route}: ${what} (${how}; fired ${rule.fired ?? 0})`;
}
