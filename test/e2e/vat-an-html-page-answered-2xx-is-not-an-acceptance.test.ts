import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClients } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { createDlqDeps } from '../../src/dead-letters/open.js';
import { replayEntry } from '../../src/dead-letters/service.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { startFakeApi, type FakeApi } from '../helpers/fake-api.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A 2xx to a VAT submission whose body is not the service's at all — an HTML page — is no
 * acceptance: a WAF or a proxy answers so when it blocks a request (F5 BIG-IP ASM's default
 * blocking response page is an HTML page with status 200 and a support ID: F5's "Configuring what
 * happens if a request is blocked"; its text as served in F5EMEA/oltra, use-cases/nap/basic/
 * virtualserver/README.md). Settled as confirmed, the blocked filing is lost: never sent again, and
 * the ledger calls it filed. Such an answer leaves the outcome unknown, so the same bytes go again
 * and the service's own answer (its acceptance, or its duplicate answer when the page came after
 * it stored the submission) settles it. Answers that are the service's JSON with fields missing or
 * added, and an empty 2xx body, stay acceptances (docs/decisions.md).
 *
 * A local server on port 0 stands in front of the emulator's VAT submission and plays the pages,
 * forwarding the submission to the emulator first when the case says so.
 */

const SUBMIT = 'POST /api/vat/v1/transactions/';

/** F5's default blocking page, as F5 documents and serves it (the support ID varies per request). */
const F5_PAGE =
  "<html><head><title>Request Rejected</title></head><body>The requested URL was rejected. Please consult with your administrator.<br><br>Your support ID is: 4045204596866416688<br><br><a href='javascript:history.back();'>[Go Back]</a></body></html>";

type Page = 'f5' | 'maintenance-as-json' | 'xml';
interface Step {
  /** The service stored the submission before the page below was played (a proxy that rewrites its answer). */
  stored: boolean;
  page: Page;
  status: 200 | 201;
}

const PAGES: Record<Page, { headers: Record<string, string>; body: string }> = {
  f5: { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }, body: F5_PAGE },
  // A maintenance page served under the API's content type.
  'maintenance-as-json': { headers: { 'content-type': 'application/json' }, body: '\n<!DOCTYPE html>\n<html><body><h1>Down for maintenance</h1></body></html>' },
  xml: { headers: { 'content-type': 'text/xml' }, body: '<?xml version="1.0"?><result>blocked</result>' },
};

describe('an HTML page answered 2xx is not an acceptance of a VAT submission', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let front: FakeApi;
  let script: (Step | { raw: { status: number; headers: Record<string, string>; body: string } })[] = [];

  beforeAll(async () => {
    front = await startFakeApi();
    front.fallback(async (req, res) => {
      const step = `${req.method} ${req.path}` === SUBMIT ? script.shift() : undefined;
      const forward = async () => {
        const answer = await request(`${rig.emulator.url}${req.url}`, {
          method: req.method as 'GET' | 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json', authorization: req.headers.authorization ?? '' },
          ...(req.method === 'GET' ? {} : { body: req.body }),
        });
        return { status: answer.statusCode, text: await answer.body.text() };
      };
      if (step === undefined) {
        const { status, text } = await forward();
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
        return;
      }
      if ('raw' in step) {
        expect((await forward()).status).toBe(201);
        res.writeHead(step.raw.status, step.raw.headers);
        res.end(step.raw.body);
        return;
      }
      if (step.stored) expect((await forward()).status).toBe(201);
      const page = PAGES[step.page];
      res.writeHead(step.status, page.headers);
      res.end(page.body);
    });
  });
  afterAll(async () => {
    await front.close();
  });

  async function withRig<T>(run: number, body: (api: ReturnType<typeof createApiClients>, prefix: string) => Promise<T>): Promise<T> {
    const prefix = `${ctx.prefix.slice(0, -1)}-${run}}`;
    rig = await createVatRig({ url: ctx.url, prefix });
    const api = createApiClients({ taxUrl: rig.emulator.url, vatUrl: front.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
    try {
      return await body(api, prefix);
    } finally {
      script = [];
      await api.close();
      await rig.close();
      for await (const keys of ctx.redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
        if (keys.length > 0) await ctx.redis.unlink(...keys);
      }
    }
  }

  const filedOnce = (number: string) => rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number === number);

  it('files the invoice once and knows it is filed, whatever pages stood in for the answer', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ stored: fc.boolean(), page: fc.constantFrom<Page>('f5', 'maintenance-as-json', 'xml'), status: fc.constantFrom(200 as const, 201 as const) }), {
          minLength: 1,
          maxLength: 3,
        }),
        async (steps) => {
          run += 1;
          await withRig(run, async (api, prefix) => {
            const what = JSON.stringify(steps);
            const handler = rig.handler({ vat: api.vat });
            const number = `INV-H${run}`;
            const record = vatRecord(number);
            const deps = createDlqDeps(rig.redis, rig.queues, loadConfig({ TAXSYNC_PREFIX: prefix }), parseSettings({}));
            await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
            script = [...steps];
            for (let round = 0; round < 3; round++) {
              let last = await rig.run(record, handler);
              for (let i = 0; i < 10 && (last.kind === 'retry' || last.kind === 'delayed'); i++) {
                rig.advance(120_000);
                last = await rig.run(record, handler);
              }
              const letters = await rig.deadLettersOf(record);
              if (letters.length === 0) break;
              for (const letter of letters) await replayEntry(deps, letter, 'tester');
            }
            expect(script, `${what}: every page was played`).toEqual([]);
            // 100.00 net at 19 % = 19.00 VAT, filed once.
            expect(filedOnce(number).map((t) => `${t.net}/${t.vat}`), `${what}: filed once`).toEqual(['100.00/19.00']);
            const [entry] = await rig.ledger.forRecord(recordKeyString(record));
            expect(entry?.state, `${what}: the ledger knows it is filed`).toBe('confirmed');
            expect((await rig.deadLettersOf(record)).map((l) => l.error.code), what).toEqual([]);
            const outcomes = (await rig.ledger.history(entry!.entity_jurisdiction!, number)).map((h) => h.outcome);
            expect(outcomes.filter((o) => o === 'unknown'), `${what}: each page left the outcome unknown`).toHaveLength(steps.length);
          });
        },
      ),
      { numRuns: 25, examples: [[[{ stored: false, page: 'f5', status: 200 }]], [[{ stored: true, page: 'f5', status: 200 }]]] },
    );
  }, 120_000);

  const tolerated: [string, { status: number; headers: Record<string, string>; body: string }][] = [
    ['a JSON body with fields missing and others added', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"created":true,"links":{"self":"/x"}}' }],
    ['an empty 201', { status: 201, headers: {}, body: '' }],
    ['an empty 200 labelled text/html', { status: 200, headers: { 'content-type': 'text/html' }, body: '' }],
    ['a JSON body that is not an object', { status: 201, headers: { 'content-type': 'application/json' }, body: '"ok"' }],
  ];
  for (const [i, [name, raw]] of tolerated.entries()) {
    it(`takes ${name} as the service's acceptance: confirmed, sent once`, async () => {
      await withRig(100 + i, async (api) => {
        const number = `INV-T${i}`;
        const record = vatRecord(number);
        await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
        script = [{ raw }];
        expect((await rig.run(record, rig.handler({ vat: api.vat }))).kind).toBe('applied');
        expect(script).toEqual([]);
        expect(front.requestsTo(SUBMIT).filter((r) => r.body.includes(`"${number}"`))).toHaveLength(1);
        expect(filedOnce(number)).toHaveLength(1);
        const [entry] = await rig.ledger.forRecord(recordKeyString(record));
        expect(entry?.state).toBe('confirmed');
      });
    });
  }
});
