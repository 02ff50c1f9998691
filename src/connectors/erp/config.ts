import { defineConnectorConfig } from '../types.js';

/** What this connector reads from the environment (docs/configuration.md); pure, so src/config imports it. */
export const erpConfig = defineConnectorConfig({
  id: 'erp',
  secretVariable: 'ERP_WEBHOOK_SECRET',
  devSecret: 'whsec_ZGV2LWVycC1zZWNyZXQtMzItYnl0ZXMtbG9uZyE=',
});
