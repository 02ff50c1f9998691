import { afterEach, beforeEach } from 'vitest';
import type { TaxsyncError } from '../../../src/domain/errors.js';
import { createApiClients, type ApiClients } from '../../../src/api/index.js';
import { Secret } from '../../../src/config/secret.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.js';

export type Running = Emulator & { url: string };

export interface EmulatorTestContext {
  emulator: Running;
  clients: ApiClients;
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

/** A fresh emulator on 127.0.0.1, port 0, and the real clients pointed at it, for each test. */
export function useEmulator(options: EmulatorOptions & { variantA?: boolean } = {}): EmulatorTestContext {
  const ctx = {} as EmulatorTestContext;
  let cachedToken: string | undefined;
  beforeEach(async () => {
    const { variantA, ...emulatorOptions } = options;
    ctx.emulator = await startEmulator({ control: true, ...emulatorOptions });
    ctx.clients = createApiClients({
      taxUrl: ctx.emulator.url,
      ...(variantA ? { authUrl: ctx.emulator.url } : {}),
      clientId: DEFAULT_CLIENT.clientId,
      clientSecret: new Secret(DEFAULT_CLIENT.clientSecret),
    });
    cachedToken = undefined;
  });
  afterEach(async () => {
    await ctx.clients.close();
    await ctx.emulator.close();
  });
  ctx.token = async () => {
    if (cachedToken !== undefined) return cachedToken;
    const res = await ctx.http('POST', '/v1/auth/token', { json: { client_id: DEFAULT_CLIENT.clientId, client_secret: DEFAULT_CLIENT.clientSecret }, token: null });
    cachedToken = res.body.access_token as string;
    return cachedToken;
  };
  ctx.http = async (method, path, opts = {}) => {
    const token = opts.token === undefined ? await ctx.token() : opts.token;
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(`${ctx.emulator.url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return ctx;
}

/** Captures the rejection of a promise (fails when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<TaxsyncError> {
  try {
    await promise;
  } catch (error) {
    return error as TaxsyncError;
  }
  throw new Error('expected the promise to reject');
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
