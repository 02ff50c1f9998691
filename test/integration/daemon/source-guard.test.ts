import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/queue/keys.js';
import { checkSources } from '../../../src/daemon/source-guard.js';
import { useRedis } from '../../helpers/redis.js';

describe('source-change guard', () => {
  const ctx = useRedis();

  it('remembers the sources on first start and accepts the same ones again', async () => {
    const keys = createKeys(ctx.prefix);
    await checkSources(ctx.redis, keys, { shopify: 'shopify', erp: 'api' }, { acceptChange: false });
    await expect(checkSources(ctx.redis, keys, { shopify: 'shopify', erp: 'api' }, { acceptChange: false })).resolves.toEqual({ changed: [] });
  });

  it('refuses to start when a connector source changed, naming it', async () => {
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
});
