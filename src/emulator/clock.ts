/**
 * The emulator's business clock: token expiry, registration status, "invoice_date not in the
 * future", timestamps. It runs with real time plus an offset that tests and the control API can
 * move. The request log deliberately uses real time instead (request-log.ts).
 */
export interface EmulatorClock {
  now(): number;
  /** Moves the clock so that now() is `ms`; time keeps flowing from there. */
  set(ms: number): void;
  advance(ms: number): void;
  /** Back to the base clock. */
  reset(): void;
}

export function createClock(base: () => number = Date.now): EmulatorClock {
  let offset = 0;
  return {
    now: () => base() + offset,
    set: (ms) => {
      offset = ms - base();
    },
    advance: (ms) => {
      offset += ms;
    },
    reset: () => {
      offset = 0;
    },
  };
}

export function isoNow(clock: EmulatorClock): string {
  return new Date(clock.now()).toISOString();
}

/** Today's date in UTC, `YYYY-MM-DD`. */
export function today(clock: EmulatorClock): string {
  return isoNow(clock).slice(0, 10);
}
