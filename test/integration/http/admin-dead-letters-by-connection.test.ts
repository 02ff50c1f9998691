import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { buildApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetrics } from '../../../src/observability/metrics.js';
import { createAuditLog } from '../../../src/queue/audit.js';
import { pipelineDlqDeps } from '../../helpers/dead-letters.js';
import { createPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';
import { failedInvoice, shopConnections, shopInvoice, unreadableDelivery } from '../../helpers/shops-de-fr-operator-fixtures.js';

/**
 * The web view's dead-letter list filters by connection like by any other field (a `connection`
 * query parameter, a field of the filter form), and shows each entry's connection: two
 * WooCommerce shops whose order 1001 failed in both, and a file ingest's event of shop-fr's order.
 */

const TOKEN = 'adm1n-t0ken-for-the-connection-filter-tests';
const headers = { authorization: `Bearer ${TOKEN}` };

describe("the web view's dead letters by connection", () => {
  const ctx = useRedis();
  let pipeline: Pipeline;
  let app: FastifyInstance;

  async function build(withConnections: boolean): Promise<FastifyInstance> {
    const connections = shopConnections();
    return buildApp({
      connectors: {},
      producer: pipeline.producer,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      bodyLimitBytes: 4096,
      rawBodyLimitBytes: 100,
      ready: () => Promise.resolve(true),
      health: { usesEmulator: true },
      admin: {
        operators: [{ name: 'alice', token: new Secret(TOKEN) }],
        sessions: { redis: pipeline.producerConnection, keys: pipeline.keys },
        queues: Object.values(pipeline.queues),
        // As src/daemon/serve.ts builds them: the dead-letter tools carry the daemon's connections.
        dlq: (actor) => ({ ...pipelineDlqDeps(pipeline, { actor }), ...(withConnections ? { connections } : {}) }),
      },
    });
  }

  const rows = (body: string) => [...body.matchAll(/href="\/admin\/dead-letters\/entries\/([^"]+)"/g)].map((m) => m[1]);
  const cells = (body: string) => [...body.matchAll(/<td>([^<]*)<\/td><td><a href="\/admin\/dead-letters\/entries\/([^"]+)"/g)].map((m) => `${m[2]} ${m[1]}`);

  beforeEach(async () => {
    pipeline = await createPipeline(ctx.url, ctx.prefix);
    await pipeline.producer.accept({
      events: [],
      deadLetters: [
        failedInvoice('de-1001', shopInvoice('shop-de', '1001'), '2026-11-21T02:40:00.000Z'),
        failedInvoice('fr-1001', shopInvoice('shop-fr', 'fr-1001'), '2026-11-21T02:41:00.000Z'),
        unreadableDelivery('fr-delivery', 'shop-fr', '2026-11-21T02:42:00.000Z'),
        failedInvoice('fr-1002-file', shopInvoice('ingest', 'fr-1002'), '2026-11-21T02:43:00.000Z'),
      ],
    });
  });
  afterEach(async () => {
    await app.close();
    await pipeline.close();
  });

  it("lists a shop's entries only, each with its connection, keeping the filter in the form and the links", async () => {
    app = await build(true);
    const all = await app.inject({ url: '/admin/dead-letters', headers });
    expect(all.body).toContain('<th>connection</th>');
    expect(cells(all.body)).toEqual(['fr-1002-file shop-fr', 'fr-delivery shop-fr', 'fr-1001 shop-fr', 'de-1001 shop-de']);

    const fr = await app.inject({ url: '/admin/dead-letters?connection=shop-fr', headers });
    expect(fr.statusCode).toBe(200);
    expect(rows(fr.body)).toEqual(['fr-1002-file', 'fr-delivery', 'fr-1001']);
    expect(fr.body).toContain('<input name="connection" value="shop-fr"');
    expect(fr.body).toContain('href="/admin/dead-letters/replay?connection=shop-fr">Replay these 3');
    expect(rows((await app.inject({ url: '/admin/dead-letters?connection=shop-de', headers })).body)).toEqual(['de-1001']);
    expect(rows((await app.inject({ url: '/admin/dead-letters?connection=shop-fr&queue=ingest', headers })).body)).toEqual(['fr-delivery']);

    const show = await app.inject({ url: '/admin/dead-letters/entries/fr-1002-file', headers });
    expect(show.body).toContain('<dt>connection</dt><dd>shop-fr</dd>');
  });

  it('says an unknown connection, naming the ones there are', async () => {
    app = await build(true);
    const bad = await app.inject({ url: '/admin/dead-letters?connection=shop-it', headers });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('no connection &quot;shop-it&quot;: the connections are shop-de, shop-fr, shopify, stripe, woocommerce, erp');
    expect((await app.inject({ url: '/admin/dead-letters/discard?connection=shop-it', headers })).statusCode).toBe(400);
  });

  it("confirms and discards a shop's entries, the audit log keeping the connection", async () => {
    app = await build(true);
    const confirm = await app.inject({ url: '/admin/dead-letters/discard?connection=shop-de', headers });
    expect(confirm.body).toContain('Discard 1 entry (transactions 1; API_INVALID 1)?');
    expect(confirm.body).toContain('<input type="hidden" name="connection" value="shop-de">');
    const done = await app.inject({
      method: 'POST',
      url: '/admin/dead-letters/discard',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([
        ['id', 'de-1001'],
        ['connection', 'shop-de'],
      ]).toString(),
    });
    expect(done.body).toContain('1 discarded');
    expect(await pipeline.deadLetters.count()).toBe(3);
    const [audit] = await createAuditLog(pipeline.producerConnection, pipeline.keys).list();
    expect(audit).toMatchObject({ action: 'discard', ids: ['de-1001'], filter: { connection: 'shop-de' } });
  });

  it('without the connections, goes by the connector the entries name', async () => {
    app = await build(false);
    const all = await app.inject({ url: '/admin/dead-letters', headers });
    expect(cells(all.body)).toEqual(['fr-1002-file ingest', 'fr-delivery shop-fr', 'fr-1001 shop-fr', 'de-1001 shop-de']);
    expect(rows((await app.inject({ url: '/admin/dead-letters?connection=shop-fr', headers })).body)).toEqual(['fr-delivery', 'fr-1001']);
    const unknown = await app.inject({ url: '/admin/dead-letters?connection=shop-it', headers });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body).toContain('0 entries');
  });
});
