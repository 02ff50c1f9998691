import type { z } from 'zod';
import type { AuthedCaller } from './call.js';
import { ENDPOINTS, endpointLabel, endpointPath, type EndpointName } from './endpoints.js';
import { parseRequest } from './parse.js';
import {
  Customer,
  CustomerPage,
  CustomerRequest,
  Exemption,
  ExemptionList,
  ExemptionRequest,
  ListQuery,
  Transaction,
  TransactionPage,
  TransactionRequest,
  VerifyClaims,
  type Cursors,
} from './schemas/index.js';

export interface PageOptions {
  /** 1..100; the service's default is 20. */
  limit?: number;
  after?: string;
  before?: string;
}

export interface IterateOptions extends PageOptions {
  /** forward follows `cursors.after` while `has_next`; backward follows `cursors.before` while `has_previous`. */
  direction?: 'forward' | 'backward';
}

export interface Page<T> {
  data: T[];
  cursors: Cursors | null;
}

/** Customers and transactions: upserted by (source, external_id) in the body, read and deleted by id or key. */
export interface RecordResource<Req, Res> {
  upsert(body: Req): Promise<Res>;
  get(id: string): Promise<Res>;
  getByKey(source: string, externalId: string): Promise<Res>;
  /** One page. */
  list(options?: PageOptions): Promise<Page<Res>>;
  /** Page after page, following the cursors. */
  pages(options?: IterateOptions): AsyncGenerator<Page<Res>>;
  /** Record after record across pages. */
  iterate(options?: IterateOptions): AsyncGenerator<Res>;
  delete(id: string): Promise<void>;
  deleteByKey(source: string, externalId: string): Promise<void>;
}

export interface ExemptionResource {
  create(body: ExemptionRequest): Promise<Exemption>;
  get(id: string): Promise<Exemption>;
  update(id: string, body: ExemptionRequest): Promise<Exemption>;
  list(options?: PageOptions): Promise<Page<Exemption>>;
  pages(options?: IterateOptions): AsyncGenerator<Page<Exemption>>;
  iterate(options?: IterateOptions): AsyncGenerator<Exemption>;
  delete(id: string): Promise<void>;
}

export interface TaxClient {
  /** `POST /v1/auth/verify`: the decoded claims of the current token. */
  verify(): Promise<VerifyClaims>;
  customers: RecordResource<CustomerRequest, Customer>;
  transactions: RecordResource<TransactionRequest, Transaction>;
  exemptions: ExemptionResource;
}

type Prefix = 'customers' | 'transactions' | 'exemptions';

function pager<T>(
  caller: AuthedCaller,
  prefix: Prefix,
  schema: z.ZodType<Page<T>>,
): Pick<RecordResource<never, T>, 'list' | 'pages' | 'iterate'> {
  const name: EndpointName = `${prefix}.list`;
  async function list(options: PageOptions = {}): Promise<Page<T>> {
    const query = parseRequest(ListQuery, dropUndefined(options), endpointLabel(name));
    const { data } = await caller.json({ method: 'GET', path: endpointPath(name), query }, schema, { endpoint: endpointLabel(name) });
    return data;
  }
  async function* pages(options: IterateOptions = {}): AsyncGenerator<Page<T>> {
    const backward = options.direction === 'backward';
    let cursor: PageOptions = { limit: options.limit, after: options.after, before: options.before };
    const seen = new Set<string>();
    for (;;) {
      const page = await list(cursor);
      yield page;
      const next = backward
        ? page.cursors?.has_previous
          ? page.cursors.before
          : null
        : page.cursors?.has_next
          ? page.cursors.after
          : null;
      // A cursor seen twice would loop forever: stop rather than hammer the service.
      if (next === null || next === undefined || seen.has(next)) return;
      seen.add(next);
      cursor = backward ? { limit: options.limit, before: next } : { limit: options.limit, after: next };
    }
  }
  async function* iterate(options: IterateOptions = {}): AsyncGenerator<T> {
    for await (const page of pages(options)) yield* page.data;
  }
  return { list, pages, iterate };
}

function recordResource<Req, Res>(
  caller: AuthedCaller,
  prefix: 'customers' | 'transactions',
  requestSchema: z.ZodType<Req>,
  responseSchema: z.ZodType<Res>,
  pageSchema: z.ZodType<Page<Res>>,
): RecordResource<Req, Res> {
  const get = async (name: EndpointName, params: Record<string, string>) =>
    (await caller.json({ method: 'GET', path: endpointPath(name, params) }, responseSchema, { endpoint: endpointLabel(name) })).data;
  const del = async (name: EndpointName, params: Record<string, string>) => {
    await caller.send({ method: 'DELETE', path: endpointPath(name, params) }, { endpoint: endpointLabel(name) });
  };
  return {
    async upsert(body) {
      const name: EndpointName = `${prefix}.upsert`;
      const json = parseRequest(requestSchema, body, endpointLabel(name));
      return (await caller.json({ method: ENDPOINTS[name].method, path: endpointPath(name), json }, responseSchema, { endpoint: endpointLabel(name) }))
        .data;
    },
    get: (id) => get(`${prefix}.get`, { id }),
    getByKey: (source, externalId) => get(`${prefix}.getByKey`, { source, external_id: externalId }),
    ...pager(caller, prefix, pageSchema),
    delete: (id) => del(`${prefix}.delete`, { id }),
    deleteByKey: (source, externalId) => del(`${prefix}.deleteByKey`, { source, external_id: externalId }),
  };
}

export function createTaxClient(caller: AuthedCaller): TaxClient {
  const exemptionCall = async (name: EndpointName, params: Record<string, string>, body?: ExemptionRequest) => {
    const label = endpointLabel(name);
    const json = body === undefined ? undefined : parseRequest(ExemptionRequest, body, label);
    return (await caller.json({ method: ENDPOINTS[name].method, path: endpointPath(name, params), json }, Exemption, { endpoint: label })).data;
  };
  return {
    async verify() {
      const name: EndpointName = 'auth.verify';
      return (await caller.json({ method: 'POST', path: endpointPath(name) }, VerifyClaims, { endpoint: endpointLabel(name) })).data;
    },
    customers: recordResource(caller, 'customers', CustomerRequest, Customer, CustomerPage),
    transactions: recordResource(caller, 'transactions', TransactionRequest, Transaction, TransactionPage),
    exemptions: {
      create: (body) => exemptionCall('exemptions.create', {}, body),
      get: (id) => exemptionCall('exemptions.get', { id }),
      update: (id, body) => exemptionCall('exemptions.update', { id }, body),
      ...pager(caller, 'exemptions', ExemptionList),
      async delete(id) {
        await caller.send({ method: 'DELETE', path: endpointPath('exemptions.delete', { id }) }, { endpoint: endpointLabel('exemptions.delete') });
      },
    },
  };
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
