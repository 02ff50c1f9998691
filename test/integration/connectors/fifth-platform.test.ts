import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type Daemon } from '../../helpers/daemon.js';
import { acmeConnector } from '../../helpers/fifth-platform/index.js';
import { eventually } from '../../helpers/pipeline.js';
import { useRedis } from '../../helpers/redis.js';

const SECRET = 'acme-webhook-secret';

/**
 * docs/connectors.md, "Adding a platform": a connector defined in one folder
 * (test/helpers/fifth-platform/) and given to the one list the config and the webhook server read
 * gets its variable (ACME_WEBHOOK_SECRET), its route (/webhooks/acme) and the whole pipeline.
 */
describe('a fifth platform, one folder and one registry entry', () => {
  const ctx = useRedis();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  const delivery = {
    type: 'customer.saved',
    delivery_id: 'dlv-1',
    occurred_at: '2026-11-20T10:00:00Z',
    customer: { id: 'ACME-C-1', name: 'Acme Ada', email: 'ada@example.com' },
  };

  function post(d: Daemon, body: unknown, secret = SECRET) {
    const raw = Buffer.from(JSON.stringify(body));
    return fetch(`${d.webhookUrl}/webhooks/acme`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', ...acmeConnector.sign(raw, secret, new Date()) },
    });
  }

  it('a signed webhook to /webhooks/acme is queued and reaches the tax engine; a wrong signature is refused', async () => {
    // Acme writes the source `api`, as the ERP does: two connections of one source need prefixes
    // apart (docs/connections.md), so the ERP's connection is off here.
    daemon = await startDaemon(ctx.url, ctx.prefix, { env: { ACME_WEBHOOK_SECRET: SECRET, ERP_WEBHOOK_SECRET: '' }, extraConnectors: [acmeConnector] });
    expect(daemon.config.webhookSecrets['acme']?.map((s) => s.reveal())).toEqual([SECRET]);

    const refused = await post(daemon, delivery, 'not-the-secret');
    expect(refused.status).toBe(401);

    const accepted = await post(daemon, delivery);
    expect(accepted.status, await accepted.clone().text()).toBe(202);

    const d = daemon;
    await eventually(async () => (await d.api.tax.customers.getByKey('api', 'ACME-C-1').catch(() => undefined)) !== undefined, 60_000);
    const customer = await d.api.tax.customers.getByKey('api', 'ACME-C-1');
    expect(customer.name).toBe('Acme Ada');
  });

  it('without ACME_WEBHOOK_SECRET the route is off, as for any connector', async () => {
    daemon = await startDaemon(ctx.url, ctx.prefix, { extraConnectors: [acmeConnector] });
    const res = await post(daemon, delivery);
    expect(res.status).toBe(404);
  });
});
