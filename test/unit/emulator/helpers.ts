import { afterEach, beforeEach } from 'vitest';
import { DEFAULT_CLIENT, startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.js';
import { testVariety } from '../../helpers/emulator-variety.js';

// The emulator's own tests speak plain HTTP (fetch): they never import the client or the mapping,
// so the emulator stays a second, independent reading of the documents.

export type Running = Emulator & { url: string };

export interface EmulatorTestContext {
  emulator: Running;
  /** A bearer token from variant B, fetched once per test. */
  token(): Promise<string>;
  /** Raw HTTP against the emulator; the body is parsed when it is JSON. */
  http(method: string, path: string, options?: { json?: unknown; token?: string | null; headers?: Record<string, string>; body?: string }): Promise<RawResponse>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  // Raw JSON, asserted on freely in tests.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** A fresh emulator on 127.0.0.1, port 0, for each test; variety from testVariety() unless given. */
export function useEmulator(options: EmulatorOptions = {}): EmulatorTestContext {
  const ctx = {} as EmulatorTestContext;
  let cachedToken: string | undefined;
  beforeEach(async () => {
    ctx.emulator = await startEmulator({ control: true, variety: testVariety(), ...options });
    cachedToken = undefined;
  });
  afterEach(async () => {
    await ctx.emulator.close();
  });
  ctx.token = async () => {
    if (cachedToken !== undefined) return cachedToken;
    const res = await ctx.http('POST', '/v1/auth/token', { json: { client_id: DEFAULT_CLIENT.clientId, client_secret: DEFAULT_CLIENT.clientSecret }, token: null });
    cachedToken = res.body.access_token as string;
    return cachedToken;
  };
  ctx.http = (method, path, opts = {}) => rawHttp(ctx.emulator.url, method, path, opts.token === undefined ? () => ctx.token() : async () => opts.token ?? null, opts);
  return ctx;
}

/** One request with fetch; the body parsed when it is JSON. */
export async function rawHttp(
  base: string,
  method: string,
  path: string,
  token: () => Promise<string | null>,
  opts: { json?: unknown; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const bearer = await token();
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export const NYC = { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' };
export const LA = { street: '200 N Spring St', city: 'Los Angeles', state: 'CA', zip: '90012', country: 'US' };
export const ENTITY = '11111111-2222-4333-8444-555555555555';
export const B2B_SALES = 'b2b5a1e5-0000-4000-8000-000000000001';

/** A valid VAT transaction body for `entityJurisdiction`; override fields per test. */
export function vatBody(entityJurisdiction: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    entity_jurisdiction: entityJurisdiction,
    invoice_number: 'INV-1001',
    invoice_date: '2025-03-02',
    partner_name: 'Acme GmbH',
    partner_country: 'DE',
    vat_number: 'DE123456789',
    net: '100.00',
    vat: '19.00',
    gross: '119.00',
    vat_rate: '19.00',
    vat_rate_type: 'standard',
    currency: 'EUR',
    reporting_period: '2025-03-01',
    transaction_type_id: B2B_SALES,
    source: 'erp',
    ...overrides,
  };
}

/** The keys of a JSON object from a raw body. */
export const keysOf = (value: unknown): string[] => Object.keys(value as object);

/** One field of every element of a JSON array from a raw body. */
export const pluck = (list: unknown, field: string): unknown[] => (list as Record<string, unknown>[]).map((item) => item[field]);
