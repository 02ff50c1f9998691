import type { z } from 'zod';
import type { AuthedCaller } from './call.js';
import { ENDPOINTS, endpointLabel, endpointPath, type EndpointName } from './endpoints.js';
import { parseRequest } from './request.js';
import type { AnswerSchemas } from './parse.js';
import {
  CustomerAnswer,
  CustomerContract,
  CustomerPageAnswer,
  CustomerPageContract,
  CustomerRequest,
  ExemptionAnswer,
  ExemptionContract,
  ExemptionListAnswer,
  ExemptionListContract,
  ExemptionRequest,
  ListQuery,
  TransactionAnswer,
  TransactionContract,
  TransactionPageAnswer,
  TransactionPageContract,
  TransactionRequest,
  VerifyClaimsContract,
  VerifyClaimsAnswer,
  type Customer,
  type Exemption,
  type PageCursors,
  type Transaction,
  type VerifyClaims,
} from './schemas/index.js';

export interface PageOptions {
  /** 1..100; the service's default is 20. */
  limit?: number;
  after?: string;
  before?: string;
}

export interface IterateOptions extends PageOptions {
  /**
   * forward follows `cursors.after` while `has_next`; backward follows `cursors.before` while
   * `has_previous`. Without a readable flag a cursor is followed while pages bring records.
   */
  direction?: 'forward' | 'backward';
}

export interface Page<T> {
  data: T[];
  /** null: the last page (a bare array, or no readable cursors). */
  cursors: PageCursors | null;
}

/** Customers and transactions: upserted by (source, external_id) in the body, read and deleted by id or key. */
export interface RecordResource<Req, Res> {
  /**
   * The record as stored. A 2xx whose answer has no readable id throws API_BAD_RESPONSE with that
   * 2xx status (`acceptedUnreadable`): the write was applied, so the caller must not resend it
   * blindly but read the record back by key.
   */
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
  /** A 2xx whose answer has no readable id throws API_BAD_RESPONSE with that status (see RecordResource.upsert). */
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
  schemas: AnswerSchemas<z.ZodType>,
): Pick<RecordResource<never, T>, 'list' | 'pages' | 'iterate'> {
  const name: EndpointName = `${prefix}.list`;
  async function list(options: PageOptions = {}): Promise<Page<T>> {
    const query = parseRequest(ListQuery, dropUndefined(options), endpointLabel(name));
    const { data } = await caller.json({ method: 'GET', path: endpointPath(name), query }, schemas, { endpoint: endpointLabel(name) });
    return data as Page<T>;
  }
  async function* pages(options: IterateOptions = {}): AsyncGenerator<Page<T>> {
    const backward = options.direction === 'backward';
    let cursor: PageOptions = { limit: options.limit, after: options.after, before: options.before };
    const seen = new Set<string>([options.after, options.before].filter((c): c is string => c !== undefined));
    for (;;) {
      const page = await list(cursor);
      yield page;
      // has_next / has_previous decide when readable; left out or unreadable (a service writing
      // has_more, or "true"), the cursor is followed while pages bring records: ending at page 1
      // would read part of a list as all of it.
      const more = backward ? page.cursors?.has_previous : page.cursors?.has_next;
      const link = backward ? page.cursors?.before : page.cursors?.after;
      const next = more === false || (more === undefined && page.data.length === 0) ? null : link;
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
  record: AnswerSchemas<z.ZodType>,
  page: AnswerSchemas<z.ZodType>,
): RecordResource<Req, Res> {
  const get = async (name: EndpointName, params: Record<string, string>) =>
    (await caller.json({ method: 'GET', path: endpointPath(name, params) }, record, { endpoint: endpointLabel(name) })).data as Res;
  const del = async (name: EndpointName, params: Record<string, string>) => {
    await caller.send({ method: 'DELETE', path: endpointPath(name, params) }, { endpoint: endpointLabel(name) });
  };
  return {
    async upsert(body) {
      const name: EndpointName = `${prefix}.upsert`;
      const json = parseRequest(requestSchema, body, endpointLabel(name));
      return (await caller.json({ method: ENDPOINTS[name].method, path: endpointPath(name), json }, record, { endpoint: endpointLabel(name) }))
        .data as Res;
    },
    get: (id) => get(`${prefix}.get`, { id }),
    getByKey: (source, externalId) => get(`${prefix}.getByKey`, { source, external_id: externalId }),
    ...pager<Res>(caller, prefix, page),
    delete: (id) => del(`${prefix}.delete`, { id }),
    deleteByKey: (source, externalId) => del(`${prefix}.deleteByKey`, { source, external_id: externalId }),
  };
}

/** Each answer: what taxsync reads from it (tax-answers.ts) and the contract it is compared with (tax-engine.ts). */
const ANSWERS = {
  verify: { answer: VerifyClaimsAnswer, contract: VerifyClaimsContract },
  customer: { answer: CustomerAnswer, contract: CustomerContract },
  customerPage: { answer: CustomerPageAnswer, contract: CustomerPageContract },
  transaction: { answer: TransactionAnswer, contract: TransactionContract },
  transactionPage: { answer: TransactionPageAnswer, contract: TransactionPageContract },
  exemption: { answer: ExemptionAnswer, contract: ExemptionContract },
  exemptionList: { answer: ExemptionListAnswer, contract: ExemptionListContract },
} satisfies Record<string, AnswerSchemas<z.ZodType>>;

export function createTaxClient(caller: AuthedCaller): TaxClient {
  const exemptionCall = async (name: EndpointName, params: Record<string, string>, body?: ExemptionRequest) => {
    const label = endpointLabel(name);
    const json = body === undefined ? undefined : parseRequest(ExemptionRequest, body, label);
    return (await caller.json({ method: ENDPOINTS[name].method, path: endpointPath(name, params), json }, ANSWERS.exemption, { endpoint: label })).data as Exemption;
  };
  return {
    async verify() {
      const name: EndpointName = 'auth.verify';
      return (await caller.json({ method: 'POST', path: endpointPath(name) }, ANSWERS.verify, { endpoint: endpointLabel(name), readOnly: true })).data;
    },
    customers: recordResource<CustomerRequest, Customer>(caller, 'customers', CustomerRequest, ANSWERS.customer, ANSWERS.customerPage),
    transactions: recordResource<TransactionRequest, Transaction>(caller, 'transactions', TransactionRequest, ANSWERS.transaction, ANSWERS.transactionPage),
    exemptions: {
      create: (body) => exemptionCall('exemptions.create', {}, body),
      get: (id) => exemptionCall('exemptions.get', { id }),
      update: (id, body) => exemptionCall('exemptions.update', { id }, body),
      ...pager<Exemption>(caller, 'exemptions', ANSWERS.exemptionList),
      async delete(id) {
        await caller.send({ method: 'DELETE', path: endpointPath('exemptions.delete', { id }) }, { endpoint: endpointLabel('exemptions.delete') });
      },
    },
  };
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
