/**
 * What every command-line tool does the same way: its usage is its file's header comment, and
 * its errors end it with one clear line (bad flags and usage mistakes exit 2, a failure exits 1;
 * an unexpected error prints its stack).
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../temporal.config';
import { RunFileError, RunNotFoundError } from '../../activities/dataset/run-reader';

/** The file's leading block comment, without the comment markers. */
export function usageOf(file: string): string {
  return fs.readFileSync(file, 'utf8').split('*/')[0]!.replace(/^\/\*\*?\n?|^ \* ?/gm, '');
}

/** An error the user can act on: printed as its message alone. */
export class UsageError extends Error {
  override name = 'UsageError';
}

function describe(err: Error): { message: string; code: number } {
  if (err instanceof z.ZodError) return { message: `bad flags: ${err.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; ')} (see --help)`, code: 2 };
  if ((err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') || err instanceof UsageError) return { message: `${err.message} (see --help)`, code: 2 };
  if (err instanceof ConfigError || err instanceof RunNotFoundError || err instanceof RunFileError) return { message: err.message, code: 1 };
  return { message: err.stack ?? err.message, code: 1 };
}

export function runCli(main: () => Promise<number>): void {
  main()
    .then((code) => process.exit(code))
    .catch((err: Error) => {
      const { message, code } = describe(err);
      console.error(message);
      process.exit(code);
    });
}
