import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const woocommerceConfig = defineConnectorConfig({
  id: 'woocommerce',
  secretVariable: 'WOOCOMMERCE_WEBHOOK_SECRET',
  devSecret: 'dev-woocommerce-secret',
});
