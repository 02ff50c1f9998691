import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Decimal } from 'decimal.js';
import { answerJson, startFakeApi, type FakeApi, type RecordedRequest } from './fake-api.js';

/**
 * A tax engine of the model tests' own (tax-calculation-api.md, the parts taxsync uses): customers
 * and transactions upserted by (source, external_id) in the body, exemptions by their own id, soft
 * deletes, answers on a real local HTTP server. Unlike the emulator it accepts linked refunds past
 * the whole (a real engine's rule there is not documented) and records it as a violation instead,
 * so a test sees what taxsync sent. Writes can be made to fail in the ambiguous ways a real
 * service does, per record and per write (`faults`).
 */

/** What happens to one write. */
export type Fault =
  /** Applied and answered. */
  | 'ok'
  /** Applied, then the connection is dropped before the answer (API_NETWORK, ambiguous). */
  | 'lost'
  /** Applied, then answered 502 (a gateway that lost the service's answer). */
  | 'late'
  /** Not applied: 500. */
  | 'fail'
  /** Not applied: 429 with Retry-After 0. */
  | 'limit'
  /** Not applied: 409 (a final rejection). */
  | 'conflict';

export interface Stored {
  id: string;
  body: Record<string, unknown>;
  deleted: boolean;
}

export interface EngineWrite {
  method: string;
  /** `customer|…`, `transaction|…` (source|external_id), or `exemption|<id or new>`. */
  key: string;
  body: unknown;
  fault: Fault;
  applied: boolean;
}

export interface ModelEngine {
  readonly url: string;
  readonly api: FakeApi;
  customers: Map<string, Stored>;
  transactions: Map<string, Stored>;
  /** In creation order. */
  exemptions: Map<string, Stored>;
  writes: EngineWrite[];
  /** Things a tax engine must never be made to hold (linked refunds past the whole). A refund linked to no live original is refused (422). */
  violations: string[];
  /** Writes of one record that arrived while another write of it was still being handled, as `<key>: <method> while <method>`. */
  overlaps: string[];
  /** Decides the fault of the n-th write (0-based) of a record; default: none. */
  faults: (key: string, n: number) => Fault;
  /** Milliseconds the n-th write of a record is held after it arrived, before it is applied (a slow service); default 0. */
  delays: (key: string, n: number) => number;
  close(): Promise<void>;
}

const engineKey = (source: string, externalId: string) => `${source}|${externalId}`;

function decimal(text: unknown): Decimal {
  return new Decimal(typeof text === 'string' && text !== '' ? text : '0');
}

/** Σ unit_price × quantity of the items (the model's final_transaction_amount). */
function amountOf(body: Record<string, unknown>): Decimal {
  const items = (body.items as { unit_price?: string; quantity?: string }[] | undefined) ?? [];
  return items.reduce((sum, item) => sum.plus(decimal(item.unit_price).times(decimal(item.quantity ?? '1'))), new Decimal(0));
}

export async function startModelEngine(): Promise<ModelEngine> {
  const api = await startFakeApi();
  const writeCounts = new Map<string, number>();
  const engine: ModelEngine = {
    url: api.url,
    api,
    customers: new Map(),
    transactions: new Map(),
    exemptions: new Map(),
    writes: [],
    violations: [],
    overlaps: [],
    faults: () => 'ok',
    delays: () => 0,
    close: () => api.close(),
  };

  const transactionAnswer = (stored: Stored) => {
    const amount = amountOf(stored.body);
    return {
      ...stored.body,
      id: stored.id,
      amounts: { final_transaction_amount: amount.toFixed(2), total_items_amount: amount.toFixed(2) },
      tax: { total_tax: amount.times('0.1').toFixed(2) },
    };
  };

  const inFlight = new Map<string, string[]>();

  /** Runs a write under its fault, noting any other write of the record still being handled meanwhile. */
  async function write(res: ServerResponse, method: string, key: string, body: unknown, apply: () => { status: number; answer?: unknown }): Promise<void> {
    const handling = inFlight.get(key) ?? [];
    if (handling.length > 0) engine.overlaps.push(`${key}: ${method} while ${handling.join(', ')}`);
    handling.push(method);
    inFlight.set(key, handling);
    try {
      await handleWrite(res, method, key, body, apply);
    } finally {
      handling.splice(handling.indexOf(method), 1);
    }
  }

  /** Runs a write under its fault: `apply` is called only when the fault lets it be applied. */
  async function handleWrite(res: ServerResponse, method: string, key: string, body: unknown, apply: () => { status: number; answer?: unknown }): Promise<void> {
    const n = writeCounts.get(key) ?? 0;
    writeCounts.set(key, n + 1);
    const fault = engine.faults(key, n);
    const delay = engine.delays(key, n);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const applied = fault === 'ok' || fault === 'lost' || fault === 'late';
    engine.writes.push({ method, key, body, fault, applied });
    if (fault === 'fail') return answerJson(res, 500, { detail: 'injected: not applied' });
    if (fault === 'limit') return answerJson(res, 429, { detail: 'injected: rate limited' }, { 'retry-after': '0' });
    if (fault === 'conflict') return answerJson(res, 409, { detail: 'injected: conflict' });
    const result = apply();
    if (fault === 'lost') {
      res.socket?.destroy();
      return;
    }
    if (fault === 'late') return answerJson(res, 502, { detail: 'injected: applied, answer lost at the gateway' });
    answerJson(res, result.status, result.answer);
  }

  function checkRefunds(createdFrom: string): void {
    let sum = new Decimal(0);
    for (const t of engine.transactions.values()) {
      const info = t.body.refund_info as { is_refund_linked?: boolean; refund_linked_percentage?: string } | undefined;
      if (!t.deleted && t.body.created_from === createdFrom && info?.is_refund_linked === true) sum = sum.plus(decimal(info.refund_linked_percentage));
    }
    if (sum.greaterThan(1)) engine.violations.push(`the linked refunds of ${createdFrom} add up to ${sum.toFixed()}, more than the whole`);
  }

  const upsert = (store: Map<string, Stored>, body: Record<string, unknown>) => {
    const key = engineKey(String(body.source), String(body.external_id));
    const existing = store.get(key);
    const stored: Stored = { id: existing?.id ?? randomUUID(), body, deleted: false };
    store.set(key, stored);
    return { stored, created: existing === undefined };
  };

  const byKeyPath = /^\/v1\/(customers|transactions)\/([^/]+)\/([^/]+)$/;
  const exemptionPath = /^\/v1\/exemptions\/([^/]+)$/;

  api.fallback((req: RecordedRequest, res) => {
    const route = `${req.method} ${req.path}`;
    if (route === 'POST /v1/auth/token') {
      return answerJson(res, 200, { access_token: `model-${randomUUID()}`, token_type: 'Bearer', expires_in: 86_400 });
    }
    const body = req.body === '' ? undefined : (JSON.parse(req.body) as Record<string, unknown>);
    if (route === 'PUT /v1/customers/') {
      return write(res, 'PUT', `customer|${engineKey(String(body!.source), String(body!.external_id))}`, body, () => {
        const { stored, created } = upsert(engine.customers, body!);
        return { status: created ? 201 : 200, answer: { ...stored.body, id: stored.id } };
      });
    }
    if (route === 'PUT /v1/transactions/') {
      // As the emulator does (and any engine must): a linked refund needs a live original.
      const from = body!.created_from;
      if (typeof from === 'string' && ![...engine.transactions.values()].some((t) => t.id === from && !t.deleted)) {
        return answerJson(res, 422, { detail: 'the transaction does not agree with the records it refers to', details: { created_from: [`no live transaction ${from}`] } });
      }
      return write(res, 'PUT', `transaction|${engineKey(String(body!.source), String(body!.external_id))}`, body, () => {
        const { stored, created } = upsert(engine.transactions, body!);
        if (typeof body!.created_from === 'string') checkRefunds(body!.created_from);
        return { status: created ? 201 : 200, answer: transactionAnswer(stored) };
      });
    }
    const keyed = byKeyPath.exec(req.path);
    if (keyed) {
      const [, resource, source, external] = keyed as unknown as [string, 'customers' | 'transactions', string, string];
      const store = resource === 'customers' ? engine.customers : engine.transactions;
      const key = engineKey(decodeURIComponent(source), decodeURIComponent(external));
      const stored = store.get(key);
      if (req.method === 'GET') {
        if (stored === undefined || stored.deleted) return answerJson(res, 404, { detail: 'not found' });
        return answerJson(res, 200, resource === 'customers' ? { ...stored.body, id: stored.id } : transactionAnswer(stored));
      }
      if (req.method === 'DELETE') {
        return write(res, 'DELETE', `${resource === 'customers' ? 'customer' : 'transaction'}|${key}`, undefined, () => {
          if (stored === undefined || stored.deleted) return { status: 404, answer: { detail: 'not found' } };
          stored.deleted = true;
          return { status: 204 };
        });
      }
    }
    if (route === 'POST /v1/exemptions/') {
      return write(res, 'POST', `exemption|new`, body, () => {
        const id = randomUUID();
        engine.exemptions.set(id, { id, body: body!, deleted: false });
        return { status: 201, answer: { exemption_status: 'active', ...body, id } };
      });
    }
    if (route === 'GET /v1/exemptions/') {
      const data = [...engine.exemptions.values()].filter((e) => !e.deleted).map((e) => ({ exemption_status: 'active', ...e.body, id: e.id }));
      return answerJson(res, 200, { data, cursors: { after: null, before: null, has_next: false, has_previous: false, limit: 100 } });
    }
    const exemption = exemptionPath.exec(req.path);
    if (exemption) {
      const id = exemption[1]!;
      const stored = engine.exemptions.get(id);
      if (req.method === 'GET') {
        if (stored === undefined || stored.deleted) return answerJson(res, 404, { detail: 'not found' });
        return answerJson(res, 200, { exemption_status: 'active', ...stored.body, id });
      }
      if (req.method === 'PUT') {
        return write(res, 'PUT', `exemption|${id}`, body, () => {
          if (stored === undefined || stored.deleted) return { status: 404, answer: { detail: 'not found' } };
          stored.body = body!;
          return { status: 200, answer: { exemption_status: 'active', ...body, id } };
        });
      }
      if (req.method === 'DELETE') {
        return write(res, 'DELETE', `exemption|${id}`, undefined, () => {
          if (stored === undefined || stored.deleted) return { status: 404, answer: { detail: 'not found' } };
          stored.deleted = true;
          return { status: 204 };
        });
      }
    }
    answerJson(res, 404, { detail: `model engine: no route ${route}` });
  });
  return engine;
}
