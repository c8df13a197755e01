/**
 * The live view of a crawl while a command waits for it: on a terminal one line updated in place
 * every two seconds; in a log (not a terminal) a plain line every half minute. Sampling never
 * stops the command: a failed sample is shown and the next one tried.
 */
import { formatProgressLine, type ProgressTracker } from './status';

export interface LiveView {
  stop(): Promise<void>;
}

export interface LiveViewOptions {
  /** Where to write (default stdout). */
  out?: NodeJS.WriteStream;
  /** Milliseconds between samples; default 2 s on a terminal, 30 s otherwise. */
  everyMs?: number;
}

export function startLiveView(tracker: ProgressTracker, options: LiveViewOptions = {}): LiveView {
  const out = options.out ?? process.stdout;
  const tty = Boolean(out.isTTY);
  const every = options.everyMs ?? (tty ? 2000 : 30_000);
  let shown = false;
  let busy: Promise<void> | null = null;
  const draw = async () => {
    let line: string;
    try {
      line = formatProgressLine(await tracker.sample());
    } catch (err) {
      line = `progress unavailable: ${(err as Error).message}`;
    }
    if (tty) {
      const width = out.columns ?? 160;
      out.write(`\r\x1b[2K${line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line}`);
      shown = true;
    } else {
      out.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
    }
  };
  const timer = setInterval(() => {
    if (!busy) busy = draw().finally(() => (busy = null));
  }, every);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      if (tty && shown) out.write('\n');
    },
  };
}
