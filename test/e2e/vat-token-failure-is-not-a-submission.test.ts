import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { parseSettings } from '../../src/config/settings.js';
import { createApiClients } from '../../src/api/index.js';
import { createDlqDeps } from '../../src/dead-letters/open.js';
import { replayEntry } from '../../src/dead-letters/service.js';
import { Secret } from '../../src/domain/secret.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { answerJson, startFakeApi, type FakeApi } from '../helpers/fake-api.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A VAT submission fetches a token first (POST /v1/auth/token) and only then POSTs the VAT
 * transaction. A failure of the token fetch is no attempt of the submission: the VAT request never
 * left, so it can neither have been accepted (a 2xx token answer taxsync cannot read is not a
 * "2xx answer to the submission") nor have landed unheard (a token request that timed out, was
 * reset or answered 5xx leaves the submission certainly unsent). Were it either, the ledger would
 * call an invoice filed that never reached the service, or read another system's use of the
 * number as taxsync's own earlier acceptance — an invoice lost with no dead letter.
 *
 * The token endpoint is a local server on port 0 in front of the emulator's; the VAT service is
 * the emulator itself.
 */

type TokenFailure = 'html-200' | 'empty-200' | 'no-access-token-200' | 'mac-token-200' | '500' | '502' | '503' | '429' | 'reset' | '401';
const FAILURES: readonly TokenFailure[] = ['html-200', 'empty-200', 'no-access-token-200', 'mac-token-200', '500', '502', '503', '429', 'reset', '401'];

describe('a token fetch that fails is not an attempt of the VAT submission', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let gate: FakeApi;
  /** Token requests still to fail, and how. */
  let failing: { kind: TokenFailure; left: number } = { kind: '500', left: 0 };

  beforeAll(async () => {
    gate = await startFakeApi();
    gate.fallback(async (req, res) => {
      if (failing.left > 0) {
        failing.left -= 1;
        switch (failing.kind) {
          case 'html-200':
            res.writeHead(200, { 'content-type': 'text/html' });
            res.end('<html><body>Signing you in…</body></html>');
            return;
          case 'empty-200':
            answerJson(res, 200);
            return;
          case 'no-access-token-200':
            answerJson(res, 200, { token_type: 'Bearer', expires_in: 86_400 });
            return;
          case 'mac-token-200':
            answerJson(res, 200, { access_token: 'not-a-bearer', token_type: 'MAC', expires_in: 86_400 });
            return;
          case 'reset':
            res.destroy();
            return;
          case '429':
            answerJson(res, 429, { detail: 'slow down' }, { 'retry-after': '1' });
            return;
          default:
            answerJson(res, Number(failing.kind), { detail: `token endpoint answered ${failing.kind}` });
            return;
        }
      }
      const answer = await request(`${rig.emulator.url}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.body,
      });
      const text = await answer.body.text();
      res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  afterAll(async () => {
    await gate.close();
  });

  it('never records a submission as accepted or ambiguous because its token fetch failed', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FAILURES),
        fc.integer({ min: 1, max: 2 }),
        fc.boolean(),
        async (kind, failures, taken) => {
          run += 1;
          // A prefix (hash tag) of its own per run, removed after it.
          const prefix = `${ctx.prefix.slice(0, -1)}-${run}}`;
          rig = await createVatRig({ url: ctx.url, prefix });
          const api = createApiClients({
            taxUrl: gate.url,
            vatUrl: rig.emulator.url,
            clientId: DEFAULT_CLIENT.clientId,
            clientSecret: new Secret(DEFAULT_CLIENT.clientSecret),
          });
          try {
            const handler = rig.handler({ vat: api.vat });
            const number = `INV-T${run}`;
            const record = vatRecord(number);
            await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
            const ej = (await rig.api.vat.registrations.list()).results[0]!.entity_jurisdiction!;
            if (taken) {
              // Another system already filed this number for the entity jurisdiction (other amounts).
              await rig.api.vat.submitTransaction({
                entity_jurisdiction: ej,
                invoice_number: number,
                invoice_date: '2025-03-02',
                partner_name: 'Someone Else GmbH',
                partner_country: 'DE',
                net: '50.00',
                vat: '9.50',
                gross: '59.50',
                vat_rate: '19.00',
                vat_rate_type: 'standard',
                currency: 'EUR',
                reporting_period: '2025-01-01',
                transaction_type_id: (await rig.api.vat.transactionTypes())[0]!.id,
                source: 'api',
              });
            }
            failing = { kind, left: failures };
            const deps = createDlqDeps(rig.redis, rig.queues, loadConfig({ TAXSYNC_PREFIX: prefix }), parseSettings({}));
            // The job runs until it rests; a dead letter of the token failure (the operator fixed
            // the credentials or the endpoint) is replayed, as operations.md says.
            for (let round = 0; round < 6; round++) {
              const result = await (async () => {
                let last = await rig.run(record, handler);
                for (let i = 0; i < 10 && (last.kind === 'retry' || last.kind === 'delayed'); i++) {
                  rig.advance(120_000);
                  last = await rig.run(record, handler);
                }
                return last;
              })();
              const letters = (await rig.deadLettersOf(record)).filter((l) => l.error.code !== 'VAT_DUPLICATE');
              if (result.kind !== 'dead-lettered' || letters.length === 0) break;
              for (const letter of letters) await replayEntry(deps, letter, 'tester');
            }

            const held = rig.emulator.state.vatTransactions.live().map((t) => t.value).filter((t) => t.invoice_number === number);
            const [entry] = await rig.ledger.forRecord(recordKeyString(record));
            const codes = (await rig.deadLettersOf(record)).map((l) => l.error.code);
            if (taken) {
              // Only the other system's transaction is there: taxsync's invoice is not filed, and says so.
              expect(held.map((t) => t.net), `${kind} ×${failures}: the service holds only the other system's ${number}`).toEqual(['50.00']);
              expect(entry?.state, `${kind} ×${failures}: the ledger must not call ${number} filed`).toBe('rejected');
              expect(codes, `${kind} ×${failures}: a real conflict is dead-lettered`).toEqual(['VAT_DUPLICATE']);
            } else {
              expect(held.map((t) => t.net), `${kind} ×${failures}: ${number} filed once`).toEqual(['100.00']);
              expect(entry, `${kind} ×${failures}`).toMatchObject({ state: 'confirmed', resends: 0 });
              expect(codes).toEqual([]);
            }
          } finally {
            failing = { kind: '500', left: 0 };
            await api.close();
            await rig.close();
            for await (const keys of ctx.redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
              if (keys.length > 0) await ctx.redis.unlink(...keys);
            }
          }
        },
      ),
      { numRuns: 40, examples: [['html-200', 1, false], ['500', 1, true], ['reset', 1, true], ['503', 2, true]] },
    );
  }, 120_000);
});
