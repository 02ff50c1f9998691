import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const shopifyConfig = defineConnectorConfig({
  id: 'shopify',
  secretVariable: 'SHOPIFY_WEBHOOK_SECRET',
  devSecret: 'dev-shopify-secret',
});
