import type { z } from 'zod';
import { TaxsyncError } from '../domain/errors.js';
import type { AuthedCaller } from './call.js';
import { ENDPOINTS, endpointLabel, endpointPath, type EndpointName } from './endpoints.js';
import type { AnswerSchemas } from './parse.js';
import { parseRequest } from './request.js';
import {
  DraftReturnBoxesAnswer,
  DraftReturnBoxesContract,
  FilingAnswer,
  FilingApproveRequest,
  FilingContract,
  FilingCreateRequest,
  FilingFileListAnswer,
  FilingFileListContract,
  RegistrationAnswer,
  RegistrationContract,
  RegistrationCreateRequest,
  RegistrationListQuery,
  RegistrationPageAnswer,
  RegistrationPageContract,
  RegistrationPatchRequest,
  RegistrationUpdateRequest,
  VatTransactionAnswer,
  VatTransactionContract,
  VatTransactionRequest,
  VatTransactionTypeListAnswer,
  VatTransactionTypeListContract,
  type DraftReturnBoxes,
  type Filing,
  type FilingFile,
  type Registration,
  type RegistrationPage,
  type VatTransaction,
  type VatTransactionType,
} from './schemas/index.js';

/** Each answer: what taxsync reads from it (vat-answers.ts) and the contract it is compared with (vat.ts). */
const ANSWERS = {
  transaction: { answer: VatTransactionAnswer, contract: VatTransactionContract },
  types: { answer: VatTransactionTypeListAnswer, contract: VatTransactionTypeListContract },
  registration: { answer: RegistrationAnswer, contract: RegistrationContract },
  registrationPage: { answer: RegistrationPageAnswer, contract: RegistrationPageContract },
  filing: { answer: FilingAnswer, contract: FilingContract },
  files: { answer: FilingFileListAnswer, contract: FilingFileListContract },
  boxes: { answer: DraftReturnBoxesAnswer, contract: DraftReturnBoxesContract },
} satisfies Record<string, AnswerSchemas<z.ZodType>>;

export interface VatSubmission {
  /** The answer as received: its id when readable (nothing in it decides the outcome). */
  transaction: VatTransaction;
  /** 201 created; 200 processed with warnings. */
  status: number;
  withWarnings: boolean;
}

export interface RegistrationPagesOptions extends RegistrationListQuery {
  /** Follow `previous` links instead of `next` (start from a page URL given in `from`). */
  direction?: 'forward' | 'backward';
  /** A page URL (a `next` or `previous` link) to start from. */
  from?: string;
}

export interface VatClient {
  /**
   * `POST /api/{module}/v1/transactions/`. NOT idempotent: callers go through the submission
   * ledger (DESIGN.md invariant 5). Any 2xx resolves (accepted; 200 with warnings) whatever its
   * body holds. A duplicate invoice number throws VAT_DUPLICATE.
   */
  submitTransaction(body: VatTransactionRequest): Promise<VatSubmission>;
  transactionTypes(): Promise<VatTransactionType[]>;
  registrations: {
    list(options?: RegistrationPagesOptions): Promise<RegistrationPage>;
    pages(options?: RegistrationPagesOptions): AsyncGenerator<RegistrationPage>;
    iterate(options?: RegistrationPagesOptions): AsyncGenerator<Registration>;
    create(body: RegistrationCreateRequest): Promise<Registration>;
    get(id: string): Promise<Registration>;
    update(id: string, body: RegistrationUpdateRequest): Promise<Registration>;
    patch(id: string, body: RegistrationPatchRequest): Promise<Registration>;
    delete(id: string): Promise<void>;
  };
  filings: {
    create(body: FilingCreateRequest): Promise<Filing>;
    get(id: string): Promise<Filing>;
    files(id: string): Promise<FilingFile[]>;
    draftReturnBoxes(id: string): Promise<DraftReturnBoxes>;
    /** Approves, then answers the filing as it is afterwards (the approve body is not shown). */
    approve(id: string, body?: FilingApproveRequest): Promise<Filing>;
  };
}

/** A page's link made absolute against the page's own URL (RFC 3986); null when there is none. */
function absoluteLink(link: string | null | undefined, pageUrl: string, endpoint: string): string | null {
  if (link === null || link === undefined) return null;
  try {
    return new URL(link, pageUrl).toString();
  } catch {
    // Ending the paging here would read part of a list as all of it.
    throw new TaxsyncError('API_BAD_RESPONSE', `${endpoint} answered a paging link taxsync cannot read as a URL`);
  }
}

export function createVatClient(caller: AuthedCaller, options: { module: string }): VatClient {
  const path = (name: EndpointName, params: Record<string, string> = {}) => endpointPath(name, { module: options.module, ...params });
  const label = (name: EndpointName) => endpointLabel(name).replace('{module}', options.module);

  async function registrationCall(name: EndpointName, id: string, body?: unknown): Promise<Registration> {
    return (await caller.json({ method: ENDPOINTS[name].method, path: path(name, { id }), json: body }, ANSWERS.registration, { endpoint: label(name) }))
      .data;
  }

  async function listRegistrations(opts: RegistrationPagesOptions = {}): Promise<RegistrationPage> {
    const name: EndpointName = 'registrations.list';
    const { direction: _direction, from, ...filters } = opts;
    const query = parseRequest(RegistrationListQuery, filters, label(name));
    // A paging link already carries the filters; http.send refuses links to another origin.
    const req = from === undefined ? { method: 'GET' as const, path: path(name), query } : { method: 'GET' as const, path: from };
    const { data, url } = await caller.json(req, ANSWERS.registrationPage, { endpoint: label(name) });
    return { ...data, next: absoluteLink(data.next, url, label(name)), previous: absoluteLink(data.previous, url, label(name)) };
  }

  async function readFiling(id: string): Promise<Filing> {
    return (await caller.json({ method: 'GET', path: path('filings.get', { id }) }, ANSWERS.filing, { endpoint: label('filings.get') })).data;
  }

  async function* registrationPages(opts: RegistrationPagesOptions = {}): AsyncGenerator<RegistrationPage> {
    const seen = new Set<string>();
    let page = await listRegistrations(opts);
    for (;;) {
      yield page;
      const link = opts.direction === 'backward' ? page.previous : page.next;
      if (link === null || link === undefined || seen.has(link)) return;
      seen.add(link);
      page = await listRegistrations({ from: link });
    }
  }

  return {
    async submitTransaction(body) {
      const name: EndpointName = 'vat.submit';
      const json = parseRequest(VatTransactionRequest, body, label(name));
      const { data, status } = await caller.json({ method: 'POST', path: path(name), json }, ANSWERS.transaction, {
        endpoint: label(name),
        vatSubmission: true,
      });
      return { transaction: data, status, withWarnings: status === 200 };
    },
    async transactionTypes() {
      const name: EndpointName = 'vat.types';
      // A paged list is read to its end: a type on a later page is as real as one on the first.
      const types: VatTransactionType[] = [];
      const seen = new Set<string>();
      let next: string = path(name);
      for (;;) {
        const { data, url } = await caller.json({ method: 'GET', path: next }, ANSWERS.types, { endpoint: label(name) });
        types.push(...data.types);
        const link = absoluteLink(data.next, url, label(name));
        if (link === null || seen.has(link)) return types;
        seen.add(link);
        next = link;
      }
    },
    registrations: {
      list: listRegistrations,
      pages: registrationPages,
      async *iterate(opts) {
        for await (const page of registrationPages(opts)) yield* page.results;
      },
      async create(body) {
        const name: EndpointName = 'registrations.create';
        const json = parseRequest(RegistrationCreateRequest, body, label(name));
        return (await caller.json({ method: 'POST', path: path(name), json }, ANSWERS.registration, { endpoint: label(name) })).data;
      },
      get: (id) => registrationCall('registrations.get', id),
      update: (id, body) => registrationCall('registrations.update', id, parseRequest(RegistrationUpdateRequest, body, label('registrations.update'))),
      patch: (id, body) => registrationCall('registrations.patch', id, parseRequest(RegistrationPatchRequest, body, label('registrations.patch'))),
      async delete(id) {
        await caller.send({ method: 'DELETE', path: path('registrations.delete', { id }) }, { endpoint: label('registrations.delete') });
      },
    },
    filings: {
      async create(body) {
        const name: EndpointName = 'filings.create';
        const json = parseRequest(FilingCreateRequest, body, label(name));
        return (await caller.json({ method: 'POST', path: path(name), json }, ANSWERS.filing, { endpoint: label(name) })).data;
      },
      get: readFiling,
      async files(id) {
        return (await caller.json({ method: 'GET', path: path('filings.files', { id }) }, ANSWERS.files, { endpoint: label('filings.files') })).data
          .results;
      },
      async draftReturnBoxes(id) {
        return (await caller.json({ method: 'GET', path: path('filings.boxes', { id }) }, ANSWERS.boxes, { endpoint: label('filings.boxes') }))
          .data;
      },
      async approve(id, body = {}) {
        const name: EndpointName = 'filings.approve';
        const json = parseRequest(FilingApproveRequest, body, label(name));
        const res = await caller.send({ method: 'POST', path: path(name, { id }), json }, { endpoint: label(name) });
        // The approve answer is not shown in the contract: a readable Filing is used, anything else re-read.
        const parsed = FilingAnswer.safeParse(res.body);
        if (parsed.success) return parsed.data;
        return readFiling(id);
      },
    },
  };
}
