import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, spawnCli } from '../helpers/cli.js';

/**
 * A connections file with problems (docs/connections.md) stops every command at start with one
 * message naming each connection and field, a non-zero exit, and no secret in it.
 */

const FILE = {
  connections: [
    { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['literal-de-secret-1234'] },
    { id: 'shop-de', platform: 'woocommerce', webhook_secrets: ['literal-dup-secret-5678'] },
    { id: 'shop-it', platform: 'prestashop', webhook_secrets: ['literal-it-secret'] },
    { id: 'shop-fr', platform: 'woocommerce', webhook_secrets_env: ['WC_FR_UNSET'] },
    { id: 'erp-a', platform: 'erp', external_id_prefix: 'a', webhook_secrets_env: ['ERP_A'] },
    { id: 'erp-b', platform: 'erp', external_id_prefix: 'ab', webhook_secrets_env: ['ERP_A'] },
  ],
};

describe('a connections file with problems', () => {
  let main: string;
  let dir: string;
  beforeAll(async () => {
    main = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'taxsync-bad-connections-'));
    writeFileSync(join(dir, 'connections.json'), JSON.stringify(FILE));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['config', 'start'])('stops `taxsync %s` with every problem in one line and no secret', async (command) => {
    const run = spawnCli(main, [command], {
      TAXSYNC_CONNECTIONS: join(dir, 'connections.json'),
      TAXSYNC_DATA_DIR: dir,
      TAXSYNC_HTTP_HOST: '127.0.0.1',
      TAXSYNC_HTTP_PORT: '0',
      ERP_A: 'whsec_ZW52LWVycC1zZWNyZXQtdmFsdWUtMzItYnl0ZXM=',
      LOG_LEVEL: 'silent',
    });
    const exit = await run.exited;
    const output = run.output();
    expect(exit.code, output).not.toBe(0);
    const lines = output.trim().split('\n').filter((line) => line.includes('invalid connections'));
    expect(lines, output).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toContain('CONFIG_INVALID');
    expect(line).toContain('connections[1] "shop-de": the id "shop-de" is declared twice');
    expect(line).toContain('connections[2] "shop-it": platform "prestashop" is not one taxsync knows');
    expect(line).toContain('connections[3] "shop-fr": webhook_secrets_env names WC_FR_UNSET, which is not set');
    expect(line).toContain('connections "erp-a" and "erp-b" both write source "api"');
    for (const secret of ['literal-de-secret-1234', 'literal-dup-secret-5678', 'literal-it-secret', 'ZW52LWVycC1zZWNyZXQtdmFsdWUtMzItYnl0ZXM']) expect(output).not.toContain(secret);
  }, 60_000);
});
