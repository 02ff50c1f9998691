import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface RecordCalls {
  count: number;
  /** The body of the newest PUT for this external_id (raw JSON). */
  lastBody: string;
  /** performance.now() when the first PUT for it arrived. */
  firstAt: number;
}

export interface FakeApi {
  url: string;
  /** PUT /v1/transactions/ calls since the last reset. */
  puts: number;
  /** PUT /v1/customers/ calls since the last reset (answered, not counted in `puts`). */
  customerPuts: number;
  byRecord: Map<string, RecordCalls>;
  /** Answer every request after this many milliseconds (0: at once). */
  delayMs: number;
  reset(): void;
  /** Resolves once `puts` reaches `n`. */
  waitForPuts(n: number, deadlineMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The smallest tax API taxsync will talk to: a token on POST /v1/auth/token and a valid
 * record (id, source, external_id) for every PUT /v1/transactions/ and /v1/customers/, on
 * 127.0.0.1. Only transactions are counted per record.
 */
export async function startFakeApi(): Promise<FakeApi> {
  const api = {
    url: '',
    puts: 0,
    customerPuts: 0,
    byRecord: new Map<string, RecordCalls>(),
    delayMs: 0,
  };
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    const send = () => {
      const raw = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(raw) });
      res.end(raw);
    };
    if (api.delayMs > 0) setTimeout(send, api.delayMs);
    else send();
  };
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/v1/auth/token') {
      return answer(res, 200, { access_token: 'bench-token', token_type: 'Bearer', expires_in: 86_400 });
    }
    const resource = req.method === 'PUT' ? /^\/v1\/(transactions|customers)\/$/.exec(path ?? '')?.[1] : undefined;
    if (resource) {
      let body: { source?: unknown; external_id?: unknown };
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        return answer(res, 400, { detail: 'not JSON' });
      }
      const externalId = String(body.external_id);
      if (resource === 'customers') api.customerPuts += 1;
      else {
        api.puts += 1;
        const seen = api.byRecord.get(externalId);
        if (seen) {
          seen.count += 1;
          seen.lastBody = raw;
        } else api.byRecord.set(externalId, { count: 1, lastBody: raw, firstAt: performance.now() });
      }
      return answer(res, 200, { id: randomUUID(), source: body.source, external_id: externalId });
    }
    return answer(res, 404, { detail: `${req.method} ${path} is not served by the bench API` });
  };
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  api.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return Object.assign(api, {
    reset() {
      api.puts = 0;
      api.customerPuts = 0;
      api.byRecord = new Map();
      api.delayMs = 0;
    },
    async waitForPuts(n: number, deadlineMs: number) {
      const until = Date.now() + deadlineMs;
      while (api.puts < n) {
        if (Date.now() > until) throw new Error(`the API saw ${api.puts} of ${n} PUTs before the deadline`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
