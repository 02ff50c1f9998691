import { z } from 'zod';
import { toCanonicalEvents } from '../../../src/connectors/shared/canonical.js';
import { digestEquals, fromHex, hmacSha256 } from '../../../src/connectors/shared/crypto.js';
import { invalidFromZod, parseJsonBody } from '../../../src/connectors/shared/parse.js';
import { defineConnector, type WebhookRequest } from '../../../src/connectors/types.js';
import { acmeConfig } from './config.js';
import { acmeDemo } from './demo.js';

/**
 * "Acme", a fifth platform written as docs/connectors.md ("Adding a platform") says: one folder
 * (this one, in src/connectors/acme/ for a real one) and one line in the registry (here the
 * `extraConnectors` that loadConfig and startServe take, so production keeps its four).
 * Acme signs the raw body with hex HMAC-SHA256 in `x-acme-signature` and sends one customer;
 * `demo.ts` is its sample for `taxsync demo`.
 */
const AcmeCustomerSaved = z.object({
  type: z.literal('customer.saved'),
  delivery_id: z.string().min(1),
  occurred_at: z.string(),
  customer: z.object({ id: z.string().min(1), name: z.string().min(1), email: z.string().optional() }),
});

function header(req: WebhookRequest, name: string): string | undefined {
  const value = req.headers[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export const acmeConnector = defineConnector({
  ...acmeConfig,
  defaultSource: 'api',
  signsTimestamp: false,
  contentTypes: ['application/json'],
  verify(req, settings) {
    const received = fromHex(header(req, 'x-acme-signature') ?? '');
    if (!received) return { ok: false, reason: 'missing or malformed x-acme-signature' };
    const ok = settings.secrets.some((s) => digestEquals(hmacSha256(s.reveal(), req.rawBody), received));
    return ok ? { ok: true } : { ok: false, reason: 'no secret matches' };
  },
  parse(req, settings) {
    const json = parseJsonBody(req.rawBody);
    if (!json.ok) return { kind: 'invalid', message: json.message };
    const parsed = AcmeCustomerSaved.safeParse(json.value);
    if (!parsed.success) return invalidFromZod(parsed.error, {});
    const { delivery_id: deliveryId, occurred_at, customer } = parsed.data;
    const checked = toCanonicalEvents(
      [
        {
          id: `acme-${deliveryId}`,
          type: 'customer.upserted',
          occurred_at,
          connector: 'acme',
          record: { kind: 'customer', source: settings.source, external_id: customer.id },
          data: { name: customer.name, ...(customer.email && { email: customer.email }) },
        },
      ],
      { topic: parsed.data.type, deliveryId },
    );
    if (!checked.ok) return checked.result;
    return { kind: 'events', topic: parsed.data.type, deliveryId, events: checked.events };
  },
  demo: acmeDemo,
  sign(rawBody, secret, _now: Date) {
    return { 'x-acme-signature': hmacSha256(secret, rawBody).toString('hex') };
  },
});
