import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { checkSources } from '../../../src/daemon/source-guard.js';
import { guardSources } from '../../../src/daemon/guard.js';
import { loadConfig } from '../../../src/config/index.js';
import { connectionsOf } from '../../../src/config/connections.js';
import { Secret } from '../../../src/domain/secret.js';
import { useRedis } from '../../helpers/redis.js';

describe('source-change guard', () => {
  const ctx = useRedis();

  it('remembers the sources on first start and accepts the same ones again', async () => {
    const keys = createKeys(ctx.prefix);
    await checkSources(ctx.redis, keys, { shopify: 'shopify', erp: 'api' }, { acceptChange: false });
    await expect(checkSources(ctx.redis, keys, { shopify: 'shopify', erp: 'api' }, { acceptChange: false })).resolves.toEqual({ changed: [] });
  });

  it('refuses to start when a connection source changed, naming it', async () => {
    const keys = createKeys(ctx.prefix);
    await checkSources(ctx.redis, keys, { erp: 'api' }, { acceptChange: false });
    await expect(checkSources(ctx.redis, keys, { erp: 'netsuite' }, { acceptChange: false })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('erp: "api" → "netsuite"'),
    });
  });

  it('accepts the change when told to, and remembers the new source', async () => {
    const keys = createKeys(ctx.prefix);
    await checkSources(ctx.redis, keys, { erp: 'api' }, { acceptChange: false });
    const result = await checkSources(ctx.redis, keys, { erp: 'netsuite' }, { acceptChange: true });
    expect(result.changed).toEqual([{ connector: 'erp', from: 'api', to: 'netsuite' }]);
    await expect(checkSources(ctx.redis, keys, { erp: 'netsuite' }, { acceptChange: false })).resolves.toEqual({ changed: [] });
  });

  it("refuses to start when a connection's prefix changed, and remembers a default connection as it always did", async () => {
    const config = loadConfig({ TAXSYNC_PREFIX: ctx.prefix });
    const shop = (prefix: string) =>
      connectionsOf([{ id: 'shop-fr', platform: 'woocommerce', source: 'woocommerce', externalIdPrefix: prefix, webhookSecrets: [new Secret('s')], api: undefined, declared: true }]);
    await guardSources(config, shop('fr-'), ctx.url, false);
    expect(await ctx.redis.hget(createKeys(ctx.prefix).sources, 'shop-fr')).toBe('woocommerce fr-');
    await expect(guardSources(config, shop('f-'), ctx.url, false)).rejects.toMatchObject({ message: expect.stringContaining('shop-fr: "woocommerce fr-" → "woocommerce f-"') });
    const defaults = connectionsOf([{ id: 'erp', platform: 'erp', source: 'api', externalIdPrefix: '', webhookSecrets: [new Secret('s')], api: undefined, declared: false }]);
    await guardSources(config, defaults, ctx.url, false);
    expect(await ctx.redis.hget(createKeys(ctx.prefix).sources, 'erp')).toBe('api');
  });
});
