import { Writable } from 'node:stream';

/** A log destination that keeps every line in `lines`, for tests that read what was logged. */
export function collectLines(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
}
