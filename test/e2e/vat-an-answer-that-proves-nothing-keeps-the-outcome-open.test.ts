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
import { answerJson, startFakeApi, type FakeApi } from '../helpers/fake-api.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, refundEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * Answers to a VAT submission that do not say whether the service stored it. The submission is
 * not idempotent: only a 2xx (accepted) or a refusal that evaluated the body proves anything. A
 * 5xx — with or without Retry-After — may come after the service stored the transaction; a 404, a
 * redirect, a 409 or a 4xx without field errors after an answer was lost says nothing about that
 * earlier attempt. Taken for "certainly not stored", the service's duplicate answer to the next
 * attempt becomes a "real conflict" (VAT_DUPLICATE, entry rejected) for taxsync's own filing: the
 * ledger never calls the invoice filed, so its refunds' corrections are never stated and
 * `vat reconcile` disagrees with the filing.
 *
 * A local server on port 0 stands in front of the emulator's VAT submission and plays the
 * answers, storing the transaction in the emulator first when the case says so. Whatever dead
 * letters the faults leave are replayed once the service answers normally (operations.md).
 */

type Answer = { status: number; retryAfter?: string } | 'drop';
interface Step {
  /** The emulator stores the transaction before the answer below is played. */
  stored: boolean;
  answer: Answer;
}

const SUBMIT = 'POST /api/vat/v1/transactions/';

describe('an answer that proves nothing keeps a VAT submission open', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let front: FakeApi;
  let script: Step[] = [];

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
      if (step.stored) expect((await forward()).status).toBe(201);
      if (step.answer === 'drop') {
        res.destroy();
        return;
      }
      const { status, retryAfter } = step.answer;
      answerJson(res, status, { error: `played ${status}` }, retryAfter === undefined ? {} : { 'retry-after': retryAfter });
    });
  });
  afterAll(async () => {
    await front.close();
  });

  const fiveXx = fc.record({
    stored: fc.boolean(),
    answer: fc.record({ status: fc.constantFrom(500, 502, 503, 504), retryAfter: fc.option(fc.constantFrom('0', '1'), { nil: undefined }) }),
  });
  /** A lost answer, then a refusal that says nothing about it (not stored itself). */
  const lostThenRefused = fc.tuple(
    fc.record({ stored: fc.boolean(), answer: fc.constant<Answer>('drop') }),
    fc.record({ stored: fc.constant(false), answer: fc.record({ status: fc.constantFrom(302, 400, 404, 405, 409, 410, 413, 415, 418, 422) }) }),
  );

  it('files the invoice once and knows it is filed, whatever came back while the answer was unclear', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fiveXx.map((s) => [s]), lostThenRefused.map(([a, b]) => [a, b])), async (steps: Step[]) => {
        run += 1;
        const prefix = `${ctx.prefix.slice(0, -1)}-${run}}`;
        rig = await createVatRig({ url: ctx.url, prefix });
        const api = createApiClients({ taxUrl: rig.emulator.url, vatUrl: front.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
        const what = JSON.stringify(steps);
        try {
          const handler = rig.handler({ vat: api.vat });
          const number = `INV-A${run}`;
          const record = vatRecord(number);
          const deps = createDlqDeps(rig.redis, rig.queues, loadConfig({ TAXSYNC_PREFIX: prefix }), parseSettings({}));
          await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
          script = [...steps];
          for (let round = 0; round < 4; round++) {
            let last = await rig.run(record, handler);
            for (let i = 0; i < 10 && (last.kind === 'retry' || last.kind === 'delayed'); i++) {
              rig.advance(120_000);
              last = await rig.run(record, handler);
            }
            // The service answers normally again: the operator replays what the faults left.
            const letters = await rig.deadLettersOf(record);
            if (letters.length === 0) break;
            for (const letter of letters) await replayEntry(deps, letter, 'tester');
          }
          expect(script, what).toEqual([]);

          const held = rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number === number);
          // 100.00 net at 19 % = 19.00 VAT
          expect(held.map((t) => `${t.net}/${t.vat}`), `${what}: filed once`).toEqual(['100.00/19.00']);
          const [entry] = await rig.ledger.forRecord(recordKeyString(record));
          expect(entry?.state, `${what}: the ledger knows ${number} is filed`).toBe('confirmed');
          expect((await rig.deadLettersOf(record)).map((l) => l.error.code), what).toEqual([]);

          // So a refund of it states its correction: 10.00 net, 1.90 VAT (10.00 × 0.19) taken back.
          const refund = vatRecord(`R-${number}`);
          await rig.accept(refundEvent(`R-${number}`, number, '10.00', '1.90'));
          expect((await rig.settle(refund)).kind, what).toBe('dead-lettered');
          const [letter] = await rig.deadLettersOf(refund);
          expect(letter?.error.code, what).toBe('VAT_CORRECTION_REQUIRED');
          expect(letter?.error.fields, what).toMatchObject({ net: [`${number}: -10.00`], vat: [`${number}: -1.90`] });
        } finally {
          script = [];
          await api.close();
          await rig.close();
          for await (const keys of ctx.redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
            if (keys.length > 0) await ctx.redis.unlink(...keys);
          }
        }
      }),
      {
        numRuns: 40,
        examples: [
          [[{ stored: true, answer: { status: 503, retryAfter: '1' } }]],
          [[{ stored: true, answer: 'drop' }, { stored: false, answer: { status: 404 } }]],
          [[{ stored: true, answer: 'drop' }, { stored: false, answer: { status: 422 } }]],
        ],
      },
    );
  }, 180_000);
});
