import { z } from 'zod';
import { blankToUndefined, secret } from '../../domain/env-fields.js';
import { defineConnectorConfig, numberedIdsCanBegin } from '../types.js';

/**
 * The external ids of QuickBooks Online records (docs/events.md, "External ids"). QBO numbers
 * records per entity type, so Invoice 145 and CreditMemo 145 may both exist, and invoices, sales
 * receipts, credit memos and refund receipts all land in the tax engine's one (source,
 * external_id) space of transactions. Every transaction id therefore names its entity, so the key
 * alone says which QBO endpoint to read it back from (a waiting refund's original, reconcile);
 * refunds keep the `refund-` prefix that no invoice id starts with. Customers are records of
 * their own kind and keep QBO's Id as it is.
 */
export const QUICKBOOKS_ID_PREFIXES = {
  Invoice: 'invoice-',
  SalesReceipt: 'salesreceipt-',
  CreditMemo: 'refund-creditmemo-',
  RefundReceipt: 'refund-refundreceipt-',
  Customer: '',
} as const;

/** Intuit's production accounting API; the sandbox is https://sandbox-quickbooks.api.intuit.com. */
export const QUICKBOOKS_PRODUCTION_API_URL = 'https://quickbooks.api.intuit.com';
export const QUICKBOOKS_SANDBOX_API_URL = 'https://sandbox-quickbooks.api.intuit.com';
/** Intuit's OAuth 2.0 token endpoint, for authorization codes and refreshes (docs/research/accounting-payloads.md). */
export const QUICKBOOKS_TOKEN_URL = 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer';

const url = (fallback: string) => z.preprocess(blankToUndefined, z.string().trim().url().default(fallback));

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const quickbooksConfig = defineConnectorConfig({
  id: 'quickbooks',
  // The Verifier Token of the app's webhooks page (not the OAuth client secret): it keys intuit-signature.
  secretVariable: 'QUICKBOOKS_VERIFIER_TOKEN',
  devSecret: 'dev-quickbooks-verifier-token',
  externalIds: {
    described: 'customers: numbers; invoice-<n>, salesreceipt-<n>, refund-creditmemo-<n>, refund-refundreceipt-<n>',
    canBegin: (text: string) => numberedIdsCanBegin(Object.values(QUICKBOOKS_ID_PREFIXES), text),
  },
  /**
   * The app's OAuth 2.0 client. Access and refresh tokens are not configuration: they are issued
   * per company (realm) at connection time and the refresh token rotates, so they live in state.
   */
  platformApi: z
    .object({
      QUICKBOOKS_CLIENT_ID: z.preprocess(blankToUndefined, z.string().trim().optional()),
      QUICKBOOKS_CLIENT_SECRET: secret,
      QUICKBOOKS_API_URL: url(QUICKBOOKS_PRODUCTION_API_URL),
      QUICKBOOKS_TOKEN_URL: url(QUICKBOOKS_TOKEN_URL),
    })
    .transform((env) => ({
      clientId: env.QUICKBOOKS_CLIENT_ID,
      clientSecret: env.QUICKBOOKS_CLIENT_SECRET,
      apiUrl: env.QUICKBOOKS_API_URL,
      tokenUrl: env.QUICKBOOKS_TOKEN_URL,
    })),
});
