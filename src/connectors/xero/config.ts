import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig } from '../types.js';

/** A Xero id: a GUID, lowercase as Xero writes it (schemas.ts lowercases any other). */
const GUID_SHAPE = 'hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh';
const REFUND = 'refund-';

/** Whether `text` is the beginning of some lowercase GUID. */
function guidCanBegin(text: string): boolean {
  if (text.length > GUID_SHAPE.length) return false;
  return [...text].every((char, i) => (GUID_SHAPE[i] === '-' ? char === '-' : /^[0-9a-f]$/.test(char)));
}

/**
 * Whether one of Xero's record ids can begin with `text`: invoices and contacts are GUIDs, credit
 * notes `refund-<CreditNoteID>` (docs/events.md, "External ids").
 */
export function xeroIdsCanBegin(text: string): boolean {
  if (guidCanBegin(text)) return true;
  return text.length <= REFUND.length ? REFUND.startsWith(text) : text.startsWith(REFUND) && guidCanBegin(text.slice(REFUND.length));
}

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const xeroConfig = defineConnectorConfig({
  id: 'xero',
  /** The app's webhook signing key (developer.xero.com → the app → Webhooks); comma-separated during a rotation. */
  secretVariable: 'XERO_WEBHOOK_KEY',
  devSecret: 'dev-xero-webhook-key',
  externalIds: { described: 'GUIDs (invoices, contacts), refund-<GUID> (credit notes)', canBegin: xeroIdsCanBegin },
  /**
   * Xero sends ids only (docs/research/accounting-payloads.md, "Webhooks"): every record is read
   * from the Accounting API with an OAuth 2.0 app's client id and secret (HTTP Basic at the token
   * endpoint). The URLs are overridable for the emulator.
   */
  platformApi: z
    .object({
      XERO_CLIENT_ID: z.preprocess(blankToUndefined, z.string().trim().optional()),
      XERO_CLIENT_SECRET: secret,
      XERO_API_URL: z.preprocess(blankToUndefined, z.string().trim().url().default('https://api.xero.com')),
      XERO_IDENTITY_URL: z.preprocess(blankToUndefined, z.string().trim().url().default('https://identity.xero.com')),
    })
    .transform((env) => ({
      clientId: env.XERO_CLIENT_ID,
      clientSecret: env.XERO_CLIENT_SECRET,
      apiUrl: env.XERO_API_URL,
      identityUrl: env.XERO_IDENTITY_URL,
    })),
});
