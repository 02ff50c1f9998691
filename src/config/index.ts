export { loadConfig, describeConfig, MIN_TOKEN_LENGTH, type AckDurability, type Config, type Operator, type WebhookSecrets } from './load.js';
