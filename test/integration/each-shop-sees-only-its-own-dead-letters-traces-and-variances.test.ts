import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RecordKey } from '../../src/domain/record-key.js';
import { createAuditLog } from '../../src/queue/audit.js';
import { createKeys } from '../../src/queue/keys.js';
import { createVarianceStore } from '../../src/variance/store.js';
import { buildCli, runCli } from '../helpers/cli.js';
import { createPipeline } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';
import { failedInvoice, shopInvoice, unreadableDelivery, writeShopsFile } from '../helpers/shops-de-fr-operator-fixtures.js';

/**
 * Two WooCommerce shops with the same order number 1001 (shop-de: woocommerce/1001, shop-fr:
 * woocommerce/fr-1001). The record-level commands take the shop's id where they took a source, and
 * every `--connection` shows the shop's own dead letters, trace and variances, never the other's.
 */

const DE = { kind: 'transaction', source: 'woocommerce', external_id: '1001' } as const satisfies RecordKey;
const FR = { kind: 'transaction', source: 'woocommerce', external_id: 'fr-1001' } as const satisfies RecordKey;

interface Listed {
  total: number;
  entries: { id: string; connection: string | null }[];
}

describe('two shops with order 1001 each', () => {
  const ctx = useRedis();
  let main: string;
  const connectionsFile = writeShopsFile();
  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(main, args, { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error', TAXSYNC_CONNECTIONS: connectionsFile, ...env });
  const json = async <T>(args: string[]): Promise<T> => {
    const run = await cli([...args, '--json']);
    expect(run.code, run.output).toBe(0);
    return JSON.parse(run.stdout) as T;
  };

  /** Each shop's order received, dead-lettered and charged 0.00 against the engine's 19.00; shop-fr's unreadable delivery too. */
  async function plant(at?: string): Promise<void> {
    const pipeline = await createPipeline(ctx.url, ctx.prefix);
    try {
      const de = shopInvoice('shop-de', '1001');
      const fr = shopInvoice('shop-fr', 'fr-1001');
      await pipeline.producer.accept({ events: [de, fr] });
      await pipeline.producer.accept({
        events: [],
        deadLetters: [failedInvoice('de-1001', de, at), failedInvoice('fr-1001', fr, at), unreadableDelivery('fr-delivery', 'shop-fr', at)],
      });
      const variances = createVarianceStore(pipeline.producerConnection, pipeline.keys);
      const multi = pipeline.producerConnection.multi();
      for (const record of [DE, FR]) variances.setTo(multi, record, { currency: 'EUR', charged: '0.00', computed: '19.00', difference: '-19.00', percent: '100.00' }, new Date('2026-11-21T03:00:00Z'));
      await multi.exec();
    } finally {
      await pipeline.close();
    }
  }

  it("trace and resend take the shop's id and the order's number, and name the shop", async () => {
    await plant();
    const [fr] = await json<{ record: RecordKey; connection: string; tax_variance?: unknown }[]>(['trace', 'shop-fr', '1001']);
    expect(fr).toMatchObject({ record: FR, connection: 'shop-fr', tax_variance: { charged: '0.00' } });
    expect(await json<{ record: RecordKey; connection: string }[]>(['trace', 'shop-de', '1001'])).toEqual([expect.objectContaining({ record: DE, connection: 'shop-de' })]);
    // The id as stored, under the source, names the same record as before.
    expect((await json<{ record: RecordKey; connection: string }[]>(['trace', 'woocommerce', 'fr-1001']))[0]).toMatchObject({ record: FR, connection: 'shop-fr' });
    expect((await cli(['trace', 'shop-fr', '1001'])).stdout).toMatch(/^transaction woocommerce\/fr-1001 \(connection shop-fr\): 1 event\(s\) stored/);
    expect(await cli(['trace', 'shop-fr', '9999'])).toMatchObject({ code: 1, stdout: 'no record woocommerce/fr-9999 (connection shop-fr) is known\n' });

    expect(await json<unknown>(['resend', 'shop-fr', '1001', '--kind', 'transaction', '--actor', 'ops-ann'])).toEqual([{ ...FR, connection: 'shop-fr' }]);
    const resent = await cli(['resend', 'shop-de', '1001', '--kind', 'transaction', '--actor', 'ops-ann']);
    expect(resent.stdout).toBe('transaction woocommerce/1001 (connection shop-de): queued, sent even if unchanged\n');
    const audit = await createAuditLog(ctx.redis, createKeys(ctx.prefix)).list();
    expect(audit.map((a) => a.ids)).toEqual([['transaction|woocommerce|1001'], ['transaction|woocommerce|fr-1001']]);
  }, 120_000);

  it("dlq --connection lists, counts, exports, plans and discards the shop's own entries, and names each entry's shop", async () => {
    await plant();
    const fr = await json<Listed>(['dlq', 'list', '--connection', 'shop-fr']);
    expect(fr.entries.map((e) => [e.id, e.connection]).sort()).toEqual([['fr-1001', 'shop-fr'], ['fr-delivery', 'shop-fr']]);
    const all = await json<Listed>(['dlq', 'list']);
    expect(Object.fromEntries(all.entries.map((e) => [e.id, e.connection]))).toEqual({ 'de-1001': 'shop-de', 'fr-1001': 'shop-fr', 'fr-delivery': 'shop-fr' });
    const table = (await cli(['dlq', 'list', '--connection', 'shop-de'])).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^ID\s+LAST FAILED\s+QUEUE\s+CODE\s+CONNECTION\s+SUBJECT\s+MESSAGE$/);
    expect(table.slice(1)).toEqual([expect.stringMatching(/^de-1001\s.*\sshop-de\s+transaction woocommerce\/1001\s/), '1 of 1 shown']);

    expect(await json<unknown>(['dlq', 'stats', '--connection', 'shop-fr'])).toEqual({ total: 2, by_queue: { transactions: 1, ingest: 1 }, by_code: { API_INVALID: 1, INVALID_PAYLOAD: 1 } });
    const exported = await cli(['dlq', 'export', '--connection', 'shop-de', '--actor', 'ops-ann']);
    expect(exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['de-1001']);
    expect(await json<unknown>(['dlq', 'replay', '--connection', 'shop-fr', '--dry-run'])).toMatchObject({ plan: { total: 2 }, dry_run: true });

    expect(await json<unknown>(['dlq', 'discard', '--connection', 'shop-fr', '--yes', '--actor', 'ops-ann'])).toMatchObject({ discarded: 2 });
    expect((await json<Listed>(['dlq', 'list'])).entries.map((e) => e.id)).toEqual(['de-1001']);
    const [discard] = await json<{ action: string; filter?: Record<string, string> }[]>(['dlq', 'audit']);
    expect(discard).toMatchObject({ action: 'discard', filter: { connection: 'shop-fr' } });
    expect((await cli(['dlq', 'audit'])).stdout).toContain('--connection shop-fr');
  }, 120_000);

  it('dlq prune --connection archives and removes only the shop’s entries past the age limit', async () => {
    await plant('2020-01-01T00:00:00.000Z');
    const archive = join(mkdtempSync(join(tmpdir(), 'taxsync-archive-')), 'archive.jsonl');
    const retention = { TAXSYNC_DLQ_MAX_AGE_DAYS: '30', TAXSYNC_DLQ_ARCHIVE: archive };
    const pruned = await cli(['dlq', 'prune', '--connection', 'shop-fr', '--json'], retention);
    expect(pruned.code, pruned.output).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ removed: 2, byAge: 2, kept: 0 });
    const archived = readFileSync(archive, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { entry: { id: string } }).entry.id);
    expect(archived.sort()).toEqual(['fr-1001', 'fr-delivery']);
    expect((await json<Listed>(['dlq', 'list'])).entries.map((e) => e.id)).toEqual(['de-1001']);
    expect((await cli(['dlq', 'prune', '--connection', 'shop-de'], retention)).stdout).toMatch(/^1 entries of connection shop-de archived to .* and removed \(1 by age, 0 over the cap\); 0 kept\n$/);
  }, 120_000);

  it("variance --connection shows the shop's own invoices, each named by its shop", async () => {
    await plant();
    const fr = await json<{ total: number; entries: { record: RecordKey; connection: string }[] }>(['variance', '--connection', 'shop-fr']);
    expect(fr).toMatchObject({ total: 1, entries: [{ record: FR, connection: 'shop-fr' }] });
    const all = await json<{ total: number; entries: { record: RecordKey; connection: string }[] }>(['variance']);
    expect(all.entries.map((e) => [e.record.external_id, e.connection])).toEqual([['1001', 'shop-de'], ['fr-1001', 'shop-fr']]);
    const table = (await cli(['variance', '--connection', 'shop-de'])).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^CONNECTION\s+RECORD\s+CURRENCY/);
    expect(table.slice(1)).toEqual([expect.stringMatching(/^shop-de\s+woocommerce\/1001\s+EUR\s+0\.00\s+19\.00/)]);
  }, 120_000);

  it('an unknown connection is an error naming the ones there are, for every command that takes one', async () => {
    for (const args of [['dlq', 'list'], ['dlq', 'stats'], ['dlq', 'export'], ['dlq', 'replay', '--dry-run'], ['dlq', 'discard', '--yes'], ['dlq', 'prune'], ['variance']]) {
      const run = await cli([...args, '--connection', 'shop-it']);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.output, args.join(' ')).toContain('no connection "shop-it": the connections are shop-de, shop-fr, ');
    }
  }, 120_000);
});

describe("a platform's default connection", () => {
  const ctx = useRedis();
  let main: string;
  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);
  const cli = (args: string[]) => runCli(main, args, { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, LOG_LEVEL: 'error' });

  it('is traced and resent by source and id as before, and named', async () => {
    const pipeline = await createPipeline(ctx.url, ctx.prefix);
    try {
      await pipeline.producer.accept({ events: [shopInvoice('woocommerce', '1001'), shopInvoice('erp', 'INV-1', 'api')] });
    } finally {
      await pipeline.close();
    }
    expect((await cli(['trace', 'woocommerce', '1001'])).stdout).toMatch(/^transaction woocommerce\/1001 \(connection woocommerce\): 1 event\(s\) stored, version 0 applied\n/);
    expect((await cli(['trace', 'api', 'INV-1'])).stdout).toMatch(/^transaction api\/INV-1 \(connection erp\): 1 event\(s\) stored/);
    expect(await cli(['trace', 'api', 'nothing-here'])).toMatchObject({ code: 1, stdout: 'no record api/nothing-here is known\n' });
    expect(await cli(['resend', 'woocommerce', '404'])).toMatchObject({ code: 1, stdout: 'no record woocommerce/404 is known\n' });
    const resent = await cli(['resend', 'api', 'INV-1', '--json']);
    expect(JSON.parse(resent.stdout)).toEqual([{ kind: 'transaction', source: 'api', external_id: 'INV-1', connection: 'erp' }]);
  }, 120_000);
});
