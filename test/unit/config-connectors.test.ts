import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { CONNECTOR_LIST } from '../../src/connectors/registry.js';
import { z } from 'zod';
import { describeConfig } from '../../src/config/load.js';
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

  it("reads each platform's API variables from its config.ts, secrets kept out of the printable config", () => {
    const config = loadConfig({
      STRIPE_API_KEY: 'rk_live_stripe',
      SHOPIFY_API_URL: 'https://shop.myshopify.com/admin/api/2025-10',
      SHOPIFY_ACCESS_TOKEN: 'shpat_token',
      WOOCOMMERCE_API_URL: 'https://shop.example.com',
      WOOCOMMERCE_CONSUMER_KEY: 'ck_key',
      WOOCOMMERCE_CONSUMER_SECRET: 'cs_secret',
    });
    expect(config.platforms.stripe.apiKey?.reveal()).toBe('rk_live_stripe');
    expect(config.platforms.stripe.apiUrl).toBe('https://api.stripe.com');
    expect(config.platforms.shopify).toMatchObject({ apiUrl: 'https://shop.myshopify.com/admin/api/2025-10' });
    expect(config.platforms.woocommerce.consumerSecret?.reveal()).toBe('cs_secret');
    const printed = JSON.stringify(describeConfig(config));
    for (const secret of ['rk_live_stripe', 'shpat_token', 'ck_key', 'cs_secret']) expect(printed).not.toContain(secret);
    expect(Object.isFrozen(config.platforms.shopify)).toBe(true);
  });

  it('a bad platform variable is named in the one configuration error, with the others', () => {
    expect(() => loadConfig({ STRIPE_API_URL: 'api.stripe.com', WOOCOMMERCE_API_URL: 'shop', TAXSYNC_HTTP_PORT: 'x' })).toThrow(
      /(?=.*STRIPE_API_URL Invalid URL)(?=.*WOOCOMMERCE_API_URL Invalid URL)(?=.*TAXSYNC_HTTP_PORT)/,
    );
  });

  it("refuses a platform URL over plain http to another host (its credentials would travel in clear), as the services' URLs", () => {
    for (const name of ['STRIPE_API_URL', 'SHOPIFY_API_URL', 'WOOCOMMERCE_API_URL']) {
      expect(() => loadConfig({ [name]: 'http://shop.example.com' }), name).toThrow(new RegExp(`${name} must use https:// for the non-loopback host shop.example.com`));
      expect(() => loadConfig({ [name]: 'http://127.0.0.1:8080' }), name).not.toThrow();
      expect(() => loadConfig({ [name]: 'http://shop.example.com', TAXSYNC_ALLOW_INSECURE_HTTP: '1' }), name).not.toThrow();
    }
  });

  it("a connector given besides the registry gets its platform API read too", () => {
    const extra = defineConnectorConfig({
      id: 'acme',
      secretVariable: 'ACME_WEBHOOK_SECRET',
      platformApi: z.object({ ACME_API_URL: z.string().url().optional() }).transform((env) => ({ apiUrl: env.ACME_API_URL })),
    });
    expect((loadConfig({ ACME_API_URL: 'https://acme.example' }, [extra]).platforms as Record<string, unknown>)['acme']).toEqual({ apiUrl: 'https://acme.example' });
    expect(() => loadConfig({ ACME_API_URL: 'acme' }, [extra])).toThrow(/ACME_API_URL/);
  });

  it("each platform's API variables are documented in docs/configuration.md", () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const variables = CONNECTOR_LIST.flatMap((c) => Object.keys(c.platformApi?.in.shape ?? {}));
    expect(variables).toEqual(expect.arrayContaining(['STRIPE_API_KEY', 'SHOPIFY_ACCESS_TOKEN', 'WOOCOMMERCE_CONSUMER_SECRET']));
    for (const v of variables) expect(doc, v).toContain(`| \`${v}\` |`);
  });
});
