/** The command-line runner's own rules: how an error becomes a message and an exit code, and a command's name. */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { RunNotFoundError } from '../../../activities/dataset/run-reader';
import { CorruptArtifactError } from '../../../activities/store/artifacts';
import { InvalidRunIdError, RunExistsError, StoreUnreachableError } from '../../../activities/store/types';
import { CommandFailure, commandName, describeError, parseFlags, usageOf, UsageError } from '../../../scripts/lib/cli';
import { ConfigError } from '../../../temporal.config';

const ROOT = path.resolve(__dirname, '../../..');

describe('the command-line runner', () => {
  it('names a command by its path', () => {
    expect(commandName(path.join(ROOT, 'scripts/report.ts'))).toBe('report');
    expect(commandName(path.join(ROOT, 'scripts/bench/crawl.ts'))).toBe('bench/crawl');
    expect(commandName(path.join(ROOT, 'workers/main.ts'))).toBe('workers/main');
  });

  it('takes the help from the header comment', () => {
    expect(usageOf(path.join(ROOT, 'scripts/report.ts'))).toMatch(/^Write a run's report/);
  });

  it('reports a mistake in the command line as bad usage (exit 2), pointing at --help', () => {
    const unknown = (() => {
      try {
        parseArgs({ args: ['--bogus'], options: {}, strict: true });
      } catch (err) {
        return err;
      }
    })();
    expect(describeError(unknown)).toEqual({ message: 'unknown option --bogus (see --help)', code: 2 });
    const missingValue = (() => {
      try {
        parseArgs({ args: ['--out'], options: { out: { type: 'string' } }, strict: true });
      } catch (err) {
        return err;
      }
    })();
    expect(describeError(missingValue)).toEqual({ message: 'option --out needs a value (see --help)', code: 2 });
    const zod = z.object({ n: z.coerce.number().int() }).safeParse({ n: 'x' });
    expect(describeError(zod.error)).toMatchObject({ code: 2, message: expect.stringMatching(/^bad flags: --n: .* \(see --help\)$/) });
    expect(describeError(new UsageError('give a run'))).toEqual({ message: 'give a run (see --help)', code: 2 });
  });

  it('refuses a mistyped flag by the nearest flag the command takes, and a flag near none as it is', () => {
    const options = { out: { type: 'string' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
    const refusal = (args: string[]) => {
      try {
        parseFlags(args, options);
      } catch (err) {
        return describeError(err);
      }
      return null;
    };
    expect(refusal(['--ot', 'x'])).toEqual({ message: 'unknown option --ot; did you mean --out? (see --help)', code: 2 });
    expect(refusal(['--dry_run'])).toEqual({ message: 'unknown option --dry_run; did you mean --dry-run? (see --help)', code: 2 });
    expect(refusal(['--no-such-flag'])).toEqual({ message: 'unknown option --no-such-flag (see --help)', code: 2 });
    expect(parseFlags(['--out', 'x', 'a'], options)).toMatchObject({ values: { out: 'x' }, positionals: ['a'] });
  });

  it('reports a refusal before anything started as bad usage, and a failure as exit 1; only a bug shows its stack', () => {
    expect(describeError(new ConfigError('invalid configuration'))).toEqual({ message: 'invalid configuration', code: 2 });
    expect(describeError(new RunExistsError('run r already exists'))).toEqual({ message: 'run r already exists', code: 2 });
    expect(describeError(new RunNotFoundError('no run r'))).toEqual({ message: 'no run r', code: 2 });
    expect(describeError(new InvalidRunIdError('not a run id: "../r"'))).toEqual({ message: 'not a run id: "../r"', code: 2 });
    expect(describeError(new StoreUnreachableError('cannot reach the store'))).toEqual({ message: 'cannot reach the store', code: 1 });
    expect(describeError(new CorruptArtifactError('artifact sha256-0 in /s is corrupt'))).toEqual({ message: 'artifact sha256-0 in /s is corrupt', code: 1 });
    expect(describeError(new CommandFailure('no function f in a.py'))).toEqual({ message: 'no function f in a.py', code: 1 });
    const bug = describeError(new TypeError('x is undefined'));
    expect(bug).toMatchObject({ code: 1, message: 'x is undefined', stack: expect.stringContaining('TypeError: x is undefined') });
  });
});
