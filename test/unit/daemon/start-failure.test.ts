import { describe, expect, it } from 'vitest';
import { isTaxsyncError } from '../../../src/domain/errors.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createLifecycle, listenError, startOrStop } from '../../../src/daemon/lifecycle.js';

const errno = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe('a start that fails', () => {
  it('stops everything already started, in reverse order, before the error goes on', async () => {
    const lifecycle = createLifecycle({ logger: createLogger({ level: 'silent' }), deadlineMs: 5_000 });
    const stopped: string[] = [];
    const failure = new Error('boom');

    const outcome = startOrStop(lifecycle, 'start', async () => {
      lifecycle.onShutdown('local redis-server', async () => void stopped.push('redis'));
      lifecycle.onShutdown('workers', async () => void stopped.push('workers'));
      throw failure;
    });

    await expect(outcome).rejects.toBe(failure);
    expect(stopped).toEqual(['workers', 'redis']);
  });

  it('stops nothing when the start succeeds', async () => {
    const lifecycle = createLifecycle({ logger: createLogger({ level: 'silent' }), deadlineMs: 5_000 });
    let stopped = false;
    lifecycle.onShutdown('redis', async () => void (stopped = true));

    await expect(startOrStop(lifecycle, 'start', async () => 42)).resolves.toBe(42);
    expect(stopped).toBe(false);
  });
});

describe('a listener that cannot start', () => {
  it('names the address, the reason and a free port to choose for a port in use', () => {
    const error = listenError(errno('EADDRINUSE'), { host: '0.0.0.0', port: 8080, variable: 'TAXSYNC_HTTP_PORT' });

    expect(isTaxsyncError(error) && error.code).toBe('LISTEN_FAILED');
    expect((error as Error).message).toBe(
      'cannot listen on 0.0.0.0:8080 (EADDRINUSE): the port is in use: stop what listens there, or choose another port, e.g. TAXSYNC_HTTP_PORT=8081',
    );
  });

  it('says a port below 1024 needs privileges', () => {
    const error = listenError(errno('EACCES'), { host: '0.0.0.0', port: 80, variable: 'TAXSYNC_METRICS_PORT' });

    expect((error as Error).message).toContain('(EACCES): not allowed to listen there (ports below 1024 need privileges)');
    expect((error as Error).message).toContain('TAXSYNC_METRICS_PORT=8080');
  });

  it('leaves any other error as it was', () => {
    const other = errno('ECONNRESET');

    expect(listenError(other, { host: 'h', port: 1, variable: 'X' })).toBe(other);
  });
});
