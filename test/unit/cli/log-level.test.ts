import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { cliLogLevel } from '../../../src/daemon/boot.js';

describe("the commands' logs", () => {
  it('show only warnings unless LOG_LEVEL or --verbose says otherwise', () => {
    expect(cliLogLevel(undefined, false)).toBe('warn');
    expect(cliLogLevel(undefined, true)).toBe('info');
    expect(cliLogLevel('error', false)).toBe('error');
    expect(cliLogLevel('error', true)).toBe('info');
    expect(cliLogLevel('debug', false)).toBe('debug');
    // --verbose never hides what LOG_LEVEL asked to see.
    expect(cliLogLevel('trace', true)).toBe('trace');
  });

  it('are readable lines, not JSON, for a person at a terminal, and secrets stay redacted', () => {
    let out = '';
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    const logger = createLogger({ level: 'info', pretty: true, destination, base: { process: 'status' } });
    logger.warn({ socket: '/tmp/x.sock', client_secret: 'cl1ent-s3cret' }, 'REDIS_URL unset');
    expect(out).toMatch(/WARN.*REDIS_URL unset/);
    expect(out).toContain('socket: "/tmp/x.sock"');
    expect(out).not.toContain('cl1ent-s3cret');
    expect(out.trimStart().startsWith('{')).toBe(false);
  });
});
