import cliProgress from 'cli-progress';

/**
 * A progress line on stderr for long commands (reconcile, backfill), only when stderr is a
 * terminal: piped or redirected output, and `--json` on stdout, stay clean.
 */
export interface Progress {
  update(phase: string, done: number): void;
  stop(): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { stream, format: '{phase} {value} done  {duration_formatted}', hideCursor: true, clearOnComplete: true, etaBuffer: 20 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(phase, done) {
      if (!started) {
        bar.start(0, 0, { phase });
        started = true;
      }
      bar.setTotal(Math.max(done, 1));
      bar.update(done, { phase });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
