import { Decimal } from 'decimal.js';
import { afterEach, beforeEach } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { Secret } from '../../src/domain/secret.js';
import type { TaxsyncError } from '../../src/domain/errors.js';
import { DEFAULT_CLIENT, type EmulatorOptions } from '../../src/emulator/index.js';
import { useEmulator, type EmulatorTestContext } from '../unit/emulator/helpers.js';

/**
 * taxsync's real clients against a fresh emulator per test: the round trip of the client's reading
 * of the documents against the emulator's own. The emulator's variety is on (testVariety()).
 */
export interface ClientRoundTripContext extends EmulatorTestContext {
  clients: ApiClients;
}

export function useEmulatorClients(options: EmulatorOptions & { variantA?: boolean } = {}): ClientRoundTripContext {
  const { variantA, ...emulatorOptions } = options;
  const ctx = useEmulator(emulatorOptions) as ClientRoundTripContext;
  beforeEach(() => {
    ctx.clients = createApiClients({
      taxUrl: ctx.emulator.url,
      ...(variantA ? { authUrl: ctx.emulator.url } : {}),
      clientId: DEFAULT_CLIENT.clientId,
      clientSecret: new Secret(DEFAULT_CLIENT.clientSecret),
    });
  });
  afterEach(async () => {
    await ctx.clients.close();
  });
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

export { B2B_SALES, ENTITY, LA, NYC, keysOf, pluck, vatBody } from '../unit/emulator/helpers.js';

/** An amount by its value, whatever scale the answer wrote it with: "18.640000" and "18.64" are "18.64". */
export function amount(text: string | null | undefined): string | undefined {
  if (text === null || text === undefined) return undefined;
  const value = new Decimal(text).toFixed();
  return value === '-0' ? '0' : value;
}
