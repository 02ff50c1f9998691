import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/domain/secret.js';
import { CONNECTOR_LIST, CONNECTORS, DEV_SECRETS } from '../../../src/connectors/registry.js';
import { demoSecrets } from '../../../src/demo/run.js';
import { DEMO_CONNECTORS, buildDemoSamples } from '../../../src/demo/samples.js';
import { acmeConnector } from '../../helpers/fifth-platform/index.js';

const now = new Date('2026-11-20T10:00:00Z');

function parse(run: string) {
  const samples = buildDemoSamples({ run, now });
  return [...samples.deliveries, ...samples.updates.map((u) => u.delivery)].map((delivery) => {
    const connector = CONNECTORS[delivery.connector]!;
    const rawBody = Buffer.from(JSON.stringify(delivery.body));
    const secret = DEV_SECRETS[delivery.connector]!;
    const headers = Object.fromEntries(
      Object.entries({ ...delivery.headers, ...connector.sign(rawBody, secret, now) }).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const req = { headers, rawBody, contentType: 'application/json', receivedAt: now };
    const settings = { source: connector.defaultSource, secrets: [new Secret(secret)], toleranceSeconds: 300 };
    expect(connector.verify(req, settings), `${delivery.connector} ${delivery.topic}`).toEqual({ ok: true });
    return { delivery, result: connector.parse(req, settings) };
  });
}

describe('demo samples', () => {
  it('parse into canonical events on every connector, with no part rejected', () => {
    for (const { delivery, result } of parse('123456789')) {
      expect(result.kind, `${delivery.connector} ${delivery.topic}: ${JSON.stringify(result)}`).toBe('events');
      if (result.kind === 'events') expect(result.rejected ?? []).toEqual([]);
    }
  });

  it('produce an event for every record the demo waits for', () => {
    const samples = buildDemoSamples({ run: '123456789', now });
    const produced = parse('123456789').flatMap(({ result }) =>
      result.kind === 'events' ? result.events.map((e) => `${e.connector}:${e.record.external_id}`) : [],
    );
    for (const expected of samples.expected) expect(produced).toContain(`${expected.connector}:${expected.external_id}`);
  });

  it('give each run its own record ids and delivery ids', () => {
    const ids = (run: string) =>
      parse(run).flatMap(({ result }) => (result.kind === 'events' ? [result.deliveryId, ...result.events.map((e) => e.record.external_id)] : []));
    const first = ids('111111111');
    for (const id of ids('222222222')) expect(first).not.toContain(id);
  });

  it('signs with the configured secret, else the development one', () => {
    const secrets = demoSecrets({ webhookSecrets: { shopify: [new Secret('mine'), new Secret('old')], stripe: [], woocommerce: [], erp: [] } });
    expect(secrets).toEqual({ shopify: 'mine', stripe: DEV_SECRETS.stripe, woocommerce: DEV_SECRETS.woocommerce, erp: DEV_SECRETS.erp });
  });

  it('update the WooCommerce order by its status only: the same invoice, later, paid', () => {
    const events = parse('123456789').filter(({ delivery }) => delivery.connector === 'woocommerce');
    const invoices = events.flatMap(({ result }) => (result.kind === 'events' ? result.events.filter((e) => e.type === 'invoice.upserted') : []));
    expect(invoices).toHaveLength(2);
    const [first, update] = invoices as [(typeof invoices)[number], (typeof invoices)[number]];
    expect(update.record).toEqual(first.record);
    expect(update.occurred_at > first.occurred_at).toBe(true);
    expect((first.data as { status: string }).status).toBe('active');
    expect((update.data as { status: string }).status).toBe('paid');
    // Everything the VAT body is made of stays as it was.
    const { status: _a, updated_at: _b, ...before } = first.data as Record<string, unknown>;
    const { status: _c, updated_at: _d, ...after } = update.data as Record<string, unknown>;
    expect(after).toEqual(before);
  });

  it('come from each connector of the registry, in its order', () => {
    expect(DEMO_CONNECTORS).toEqual(['shopify', 'stripe', 'woocommerce', 'erp']);
    const order = [...new Set(buildDemoSamples({ run: '123456789', now }).deliveries.map((d) => d.connector))];
    expect(order).toEqual(DEMO_CONNECTORS);
  });

  it("take a fifth platform's samples from its definition alone, tagged with its id, and they parse on it", () => {
    const samples = buildDemoSamples({ run: '123456789', now, connectors: [...CONNECTOR_LIST, acmeConnector] });
    const acme = samples.deliveries.filter((d) => d.connector === 'acme');
    expect(acme).toHaveLength(1);
    expect(samples.deliveries.at(-1)).toBe(acme[0]);
    expect(samples.expected).toContainEqual({ connector: 'acme', record: 'customer', external_id: 'ACME-DEMO-123456789' });

    const rawBody = Buffer.from(JSON.stringify(acme[0]!.body));
    const req = { headers: acmeConnector.sign(rawBody, 'acme-secret', now), rawBody, contentType: 'application/json', receivedAt: now };
    const settings = { source: 'api', secrets: [new Secret('acme-secret')], toleranceSeconds: 300 };
    expect(acmeConnector.verify(req, settings)).toEqual({ ok: true });
    const parsed = acmeConnector.parse(req, settings);
    expect(parsed.kind === 'events' ? parsed.events.map((e) => e.record.external_id) : parsed).toEqual(['ACME-DEMO-123456789']);
  });
});
