/**
 * No customer payload in any log line, whatever error a dependency raises (issue 16, item 5).
 * `taxsync start` runs as a child process (LOG_LEVEL=debug) with its own redis-server and a local
 * tax engine; every payload carries a marker, and it is sent through every failure path the test
 * can reach: the API answering 422 and 500 with the marker echoed in its body, a mapping error, a
 * bad signature, a malformed body, a body nested too deep, Redis answering OOM (maxmemory 1mb,
 * noeviction: ioredis errors carry the command arguments), and Redis down. Then all the output of
 * the process (stdout and stderr) is searched for the marker. The dead-letter queue, which is
 * meant to keep payloads for the operator, must hold it (so the paths were really taken).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTORS } from '../../src/connectors/registry.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { freePort, waitForPing } from '../../src/daemon/redis-probe.js';
import { buildCli, spawnCli, type CliProcess } from '../helpers/cli.js';
import { E2E_SECRETS } from '../helpers/daemon.js';
import { erpCustomer, erpInvoice } from '../helpers/erp-events.js';
import { startFakeApi, type FakeApi } from '../helpers/fake-api.js';
import { eventually } from '../helpers/pipeline.js';
import { uniquePrefix } from '../helpers/redis.js';

const MARKER = 'MARKER-7f3a';
/** What is searched for: the marker without its last character, so a cut copy is found too. */
const NEEDLE = MARKER.slice(0, -1);

describe('logs never carry customer payload', () => {
  let main: string;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    main = await buildCli();
  }, 120_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  }, 60_000);

  it('keeps the marker out of every line through API errors, mapping, signature, body, OOM and Redis-down failures', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxsync-redaction-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const redisPort = await freePort();
    const redisServer: ChildProcess = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir], { stdio: 'ignore' });
    cleanups.push(() => void redisServer.kill('SIGKILL'));
    await waitForPing(redisPort);
    const redis = new Redis(redisPort, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    cleanups.push(() => redis.disconnect());

    // The tax engine: a token, then 422 and 500 answers that echo what they were sent.
    const api: FakeApi = await startFakeApi();
    cleanups.push(() => api.close());
    const json = (res: ServerResponse, status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    api.on('POST /v1/auth/token', (_req, res) => json(res, 200, { access_token: 'fake-access-token', token_type: 'Bearer', expires_in: 86_400 }));
    api.on('PUT /v1/customers/', (req, res) => {
      const body = JSON.parse(req.body) as { external_id: string; name?: string };
      if (body.external_id === 'C-422') json(res, 422, { error: `customer "${body.name}" is invalid`, details: { name: [`${body.name} is not allowed`] } });
      else json(res, 500, { detail: `could not store ${req.body}` });
    });

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const prefix = uniquePrefix();
    const daemon: CliProcess = spawnCli(main, ['start'], {
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      TAXSYNC_PREFIX: prefix,
      TAXSYNC_HTTP_HOST: '127.0.0.1',
      TAXSYNC_HTTP_PORT: String(port),
      TAX_API_URL: api.url,
      TAX_API_CLIENT_ID: 'redaction',
      TAX_API_CLIENT_SECRET: 'redaction-secret',
      ERP_WEBHOOK_SECRET: E2E_SECRETS.erp,
      TAXSYNC_MAX_ATTEMPTS: '1',
      TAXSYNC_DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'debug',
    });
    cleanups.push(() => daemon.kill());
    await daemon.waitFor('taxsync is listening', 60_000);

    const send = (body: string, sign = true) => {
      const raw = Buffer.from(body);
      const headers = sign ? CONNECTORS.erp!.sign(raw, E2E_SECRETS.erp, new Date()) : { 'webhook-id': 'msg_unsigned', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' };
      return fetch(`${url}/webhooks/erp`, { method: 'POST', body: raw, headers: { 'content-type': 'application/json', ...headers } });
    };
    const marked = { street: `1 ${MARKER} Street`, city: 'New York', state: 'NY', zip: '10001', country: 'US' };

    // The API answers 422 and 500 with the marker in its body; an invoice without lines is a mapping error.
    expect((await send(JSON.stringify([erpCustomer('C-422', 1, { name: `Ada ${MARKER}` }), erpCustomer('C-500', 1, { name: `Bo ${MARKER}` })]))).status).toBe(202);
    expect((await send(JSON.stringify(erpInvoice('INV-EMPTY', 1, [], { addresses: { shipping: marked } })))).status).toBe(202);
    // A bad signature, a malformed body, a body nested too deep.
    expect((await send(JSON.stringify(erpCustomer('C-SIG', 1, { name: MARKER })), false)).status).toBe(401);
    expect((await send(`{"id": "x", "data": {"name": ${MARKER}`)).status).toBe(202);
    expect((await send(`{"name":"${MARKER}","x":${'['.repeat(100)}${']'.repeat(100)}}`)).status).toBe(400);
    // C-422, C-500, the invoice without lines and the malformed body: the payload is kept there.
    const queue = new Queue('dead-letter', { connection: redis, prefix });
    const deadLetters = createDeadLetterStore(queue);
    await eventually(async () => (await deadLetters.count()) === 4, 60_000);
    const kept = JSON.stringify(await deadLetters.list());
    expect(kept.split(NEEDLE).length).toBeGreaterThan(4);
    await queue.close();

    // Redis out of memory: the webhook's transaction is refused (EXECABORT, OOM, with the event in
    // the command arguments) and it answers 503.
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '1mb');
    const oom = await send(JSON.stringify(erpCustomer('C-OOM', 1, { name: `Cy ${MARKER}` })));
    expect(oom.status).toBe(503);
    await redis.config('SET', 'maxmemory', '0');

    // Redis down.
    redisServer.kill('SIGKILL');
    expect((await send(JSON.stringify(erpCustomer('C-DOWN', 1, { name: `Di ${MARKER}` })))).status).toBe(503);
    await daemon.waitFor('redis connection error', 30_000);

    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const output = daemon.output();
    // The failure paths were taken…
    for (const line of ['webhook not stored', 'dead-lettered', 'webhook rejected: signature', 'signed payload dead-lettered', 'over the structure limits', 'redis connection error']) {
      expect(output, line).toContain(line);
    }
    expect(output).toMatch(/OOM|EXECABORT/);
    // …and not one line carries the payload.
    const leaks = output.split('\n').filter((line) => line.includes(NEEDLE));
    expect(leaks).toEqual([]);
  });
});
