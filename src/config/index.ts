export { loadConfig, describeConfig, MIN_TOKEN_LENGTH, type AckDurability, type Config, type Operator, type WebhookConnectorId } from './load.js';
export { Secret } from './secret.js';
export { apiUrlProblem, isLoopbackHost } from './url-policy.js';
