import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { CONNECTOR_LIST } from '../../src/connectors/registry.js';
import { defineConnectorConfig } from '../../src/connectors/types.js';

describe('config reads each connector\'s own declaration', () => {
  it('every registered connector has its secret entry, read from the variable its config.ts names', () => {
    const env = Object.fromEntries(CONNECTOR_LIST.map((c) => [c.secretVariable, `${c.id}-one, ${c.id}-two`]));
    const config = loadConfig(env);
    for (const c of CONNECTOR_LIST) {
      expect(config.webhookSecrets[c.id]?.map((s) => s.reveal())).toEqual([`${c.id}-one`, `${c.id}-two`]);
    }
    expect(Object.keys(config.webhookSecrets)).toEqual(CONNECTOR_LIST.map((c) => c.id));
  });

  it('a connector given besides the registry is read the same way, and absent otherwise', () => {
    const extra = defineConnectorConfig({ id: 'acme', secretVariable: 'ACME_WEBHOOK_SECRET' });
    expect(loadConfig({ ACME_WEBHOOK_SECRET: 'a1' }, [extra]).webhookSecrets['acme']?.map((s) => s.reveal())).toEqual(['a1']);
    expect(loadConfig({ ACME_WEBHOOK_SECRET: 'a1' }, [extra]).webhookSecrets.shopify).toEqual([]);
    expect(loadConfig({ ACME_WEBHOOK_SECRET: 'a1' }).webhookSecrets['acme']).toBeUndefined();
  });

  it('each connector has a secret variable of its own', () => {
    const variables = CONNECTOR_LIST.map((c) => c.secretVariable);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it('each connector\'s variable is documented in docs/configuration.md', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const c of CONNECTOR_LIST) expect(doc, c.secretVariable).toContain(`| \`${c.secretVariable}\` |`);
  });
});
