import { connect, createServer } from 'node:net';

/** A TCP port on 127.0.0.1, or a unix socket path. */
export type RedisEndpoint = number | string;

/** Picks a free loopback port by binding port 0 and releasing it. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One raw PING, no client library: true when something answers +PONG within 500 ms. */
export async function answersPing(endpoint: RedisEndpoint): Promise<boolean> {
  return new Promise((done) => {
    const socket = typeof endpoint === 'number' ? connect(endpoint, '127.0.0.1') : connect(endpoint);
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      done(d.toString().startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
  });
}

/**
 * Resolves once the endpoint answers PING; rejects after `deadlineMs`, or at once when
 * `gaveUp()` says the server process is gone.
 */
export async function waitForPing(endpoint: RedisEndpoint, deadlineMs = 10_000, gaveUp: () => boolean = () => false): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!(await answersPing(endpoint))) {
    if (gaveUp() || Date.now() > until) throw new Error(`redis-server at ${String(endpoint)} did not answer PING`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
