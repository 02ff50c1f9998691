import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../src/api/errors.js';
import { TaxsyncError } from '../../src/domain/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { collectLines } from '../helpers/log-lines.js';

const MARKER = 'MARKER-7f3a';

function logged(err: unknown): { line: string; parsed: { err: Record<string, unknown> } } {
  const lines: string[] = [];
  createLogger({ level: 'info', destination: collectLines(lines) }).error({ err }, 'failed');
  return { line: lines.join(''), parsed: JSON.parse(lines[0]!) as { err: Record<string, unknown> } };
}

describe('errors in log lines', () => {
  it("drop ioredis's command arguments and the errors of a refused transaction, keeping the command and the reasons", () => {
    const oom = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), {
      name: 'ReplyError',
      command: { name: 'evalsha', args: ['sha', '5', `{"data":{"name":"${MARKER}"}}`] },
    });
    const execAbort = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), { name: 'ReplyError', previousErrors: [oom] });
    const { line, parsed } = logged(execAbort);
    expect(line).not.toContain(MARKER);
    expect(parsed.err).toMatchObject({ message: 'EXECABORT Transaction discarded because of previous errors.', previous: ["OOM command not allowed when used memory > 'maxmemory'."] });
    expect(logged(oom).parsed.err).toMatchObject({ command: 'evalsha' });
  });

  it('drop response bodies and HTTP exchanges, and the service text an API error message repeats', () => {
    const response = Object.assign(new Error('Response status code 422'), { statusCode: 422, body: { detail: MARKER } });
    const api = errorFromResponse(
      { status: 422, headers: {}, body: { error: `customer ${MARKER} is invalid`, details: { name: [`${MARKER} is too long`] } }, exchange: { request: { method: 'PUT', url: '/v1/customers/', body: MARKER }, response: { status: 422, body: MARKER } } } as never,
      { endpoint: 'PUT /v1/customers/' },
    );
    for (const err of [response, api, new TaxsyncError('INTERNAL_ERROR', 'wrapped', { cause: response })]) {
      const { line } = logged(err);
      expect(line).not.toContain(MARKER);
    }
    expect(logged(api).parsed.err).toMatchObject({ code: 'API_INVALID', status: 422, message: expect.stringMatching(/^PUT \/v1\/customers\/ answered 422 \(service text omitted/) });
  });

  it("drop the input JSON.parse quotes in its message, also in the stack and a cause's", () => {
    let syntax: unknown;
    try {
      JSON.parse(`{"name": ${MARKER}}`);
    } catch (error) {
      syntax = error;
    }
    const { line, parsed } = logged(new Error('could not read', { cause: syntax }));
    // V8 cuts the quoted input: not even its start may remain.
    expect(line).not.toContain('MARKER');
    expect((parsed.err.cause as { type: string }).type).toBe('SyntaxError');
  });
});
