import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * The part every bare server shares: read the raw body, verify its Shopify HMAC (401 when it does
 * not match), then hand the verified bytes on.
 */
export function verifiedShopifyBodies(secret: string, handle: (raw: Buffer, req: IncomingMessage, res: ServerResponse) => void): RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = createHmac('sha256', secret).update(raw).digest();
      const given = Buffer.from(String(req.headers['x-shopify-hmac-sha256'] ?? ''), 'base64');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        res.writeHead(401).end();
        return;
      }
      handle(raw, req, res);
    });
  };
}
