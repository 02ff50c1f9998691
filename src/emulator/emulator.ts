import type { FastifyInstance } from 'fastify';
import type { Authority } from './auth.js';
import type { EmulatorClock } from './clock.js';
import type { Faults } from './faults.js';
import type { EmulatorSettings } from './options.js';
import type { RequestLog } from './request-log.js';
import type { EmulatorState } from './state.js';
import type { Variety } from './variety/dice.js';

// Declared apart from server.ts, which builds it: the control routes take one and server.ts registers them.
export interface Emulator {
  /** The fastify app, not listening: use inject(), or listen() below. */
  app: FastifyInstance;
  settings: EmulatorSettings;
  state: EmulatorState;
  clock: EmulatorClock;
  authority: Authority;
  faults: Faults;
  requestLog: RequestLog;
  /** The variety of the answers: mode and seed, changeable while running. */
  variety: Variety;
  /** Clears records, tokens, added clients, the request log, faults and the clock offset; the variety goes back to its options. */
  reset(): void;
  /** Listens (port 0 = any free port) and answers the base URL, e.g. `http://127.0.0.1:41234`. */
  listen(options?: { port?: number; host?: string }): Promise<string>;
  close(): Promise<void>;
}
