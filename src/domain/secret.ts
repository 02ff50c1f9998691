const REDACTED = '[redacted]';

/**
 * A value that must never reach a log, an error message or job data (DESIGN.md invariant 7).
 * Every way of printing it prints "[redacted]"; `reveal()` is the one deliberate way out.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }
}
