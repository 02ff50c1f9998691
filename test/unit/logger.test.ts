import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

describe('logger', () => {
  it('redacts authorization headers, client secrets, tokens, webhook secrets and signatures', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        headers: { authorization: 'Bearer eyJhbGciOi', 'x-shopify-hmac-sha256': 'c2lnbmF0dXJl', 'stripe-signature': 't=1,v1=abc' },
        req: { headers: { authorization: 'Bearer nested-token', 'webhook-signature': 'v1,Zm9v' } },
        client_secret: 'cl1ent-s3cret',
        token: { access_token: 'acc3ss' },
        connector: { webhookSecret: 'whsec_abc' },
      },
      'request',
    );
    const out = lines.join('');
    for (const secret of ['eyJhbGciOi', 'c2lnbmF0dXJl', 't=1,v1=abc', 'nested-token', 'Zm9v', 'cl1ent-s3cret', 'acc3ss', 'whsec_abc']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
  });

  it('keeps ordinary fields', () => {
    const { lines, logger } = capture();
    logger.info({ source: 'shopify', external_id: 'order-1' }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ source: 'shopify', external_id: 'order-1', msg: 'hello' });
  });
});
