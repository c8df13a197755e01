/**
 * The one runner every command-line script goes through (`scripts/*.ts`, `scripts/bench/*.ts`,
 * `workers/main.ts`), so each has the same `--help`, the same exit codes and the same error format.
 *
 *   --help, -h   the script's header comment, on standard output
 *   exit 0       done
 *   exit 1       failed: the command started and could not finish (a server away, bad data, a bug)
 *   exit 2       bad usage: nothing was started or changed, because the command line cannot be
 *                acted on as given (an unknown or malformed flag or argument, a run it names that
 *                is not there, a run id already taken, an invalid configuration, input refused
 *                before anything started)
 *
 * An error is one line on standard error, `<command>: <message>`, where a mistake in the flags or
 * arguments adds ` (see --help)`; an unexpected error (a bug) is followed by its stack.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { nearestName } from '../../activities/nearest-name';

type Options = NonNullable<ParseArgsConfig['options']>;
type HelpOption = { help: { type: 'boolean'; short: 'h' } };
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O & HelpOption; allowPositionals: true; strict: true }>>;

export interface Command<O extends Options> {
  /** The script's own file (`__filename`): its leading comment is its help. */
  file: string;
  /** Its flags, as `parseArgs` declares them (`--help` is added). */
  options?: O;
  /** How many positional arguments it takes (default: none). */
  positionals?: { min?: number; max?: number };
  /** Everything after the first positional argument goes to the command as it is (a dispatcher's own command's flags). */
  passThrough?: boolean;
  run(args: { values: Parsed<O>['values']; positionals: string[]; rest: string[] }): Promise<number | void> | number | void;
}

/** A mistake in how the command was called (exit 2): its message, then ` (see --help)`. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can act on (exit 1): its message alone. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}

const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Errors whose message is all the user needs, by name: bad usage (exit 2) and failures (exit 1). */
const BAD_USAGE = new Set(['ConfigError', 'RunExistsError', 'RunNotFoundError', 'InvalidRunIdError', 'RepoListError', 'EvalRefusal', 'EvalSettingsError']);
const KNOWN_FAILURES = new Set(['RunFileError', 'RunFilesError', 'StoreUnreachableError', 'StoreMismatchError', 'SchemaTooNewError', 'ForeignServerError', 'ExportError', 'SourceError', 'CorruptArtifactError']);

/** The command's name in messages: its path without `scripts/` and `.ts` (`report`, `bench/crawl`, `workers/main`). */
export function commandName(file: string): string {
  return path.relative(PROJECT_ROOT, file).replace(/\\/g, '/').replace(/^scripts\//, '').replace(/\.ts$/, '');
}

/** The file's leading block comment, without the comment markers. */
export function usageOf(file: string): string {
  return fs.readFileSync(file, 'utf8').split('*/')[0]!.replace(/^\/\*\*?\n?|^ \* ?/gm, '');
}

/** The message and exit code of an error, as the runner reports it. */
export function describeError(err: unknown): { message: string; code: 1 | 2; stack?: string } {
  // Duck-typed: an error from another realm (a test's sandbox) is no `instanceof Error` here.
  const e = err !== null && typeof err === 'object' && typeof (err as Error).message === 'string' ? (err as Error) : new Error(String(err));
  const parseCode = (e as NodeJS.ErrnoException).code;
  if (parseCode?.startsWith('ERR_PARSE_ARGS')) {
    const unknown = /^Unknown option '([^']+)'/.exec(e.message);
    return { message: `${unknown ? `unknown option ${unknown[1]}` : e.message.split('. ')[0]!.replace(/^Option '([^' ]+)[^']*' argument missing$/, 'option $1 needs a value')} (see --help)`, code: 2 };
  }
  if (e.name === 'ZodError' && Array.isArray((e as { issues?: unknown }).issues)) {
    const issues = (e as unknown as { issues: { path: PropertyKey[]; message: string }[] }).issues;
    return { message: `bad flags: ${issues.map((i) => `--${i.path.map(String).join('.')}: ${i.message}`).join('; ')} (see --help)`, code: 2 };
  }
  if (e instanceof UsageError) return { message: `${e.message} (see --help)`, code: 2 };
  if (BAD_USAGE.has(e.name)) return { message: e.message, code: 2 };
  if (e instanceof CommandFailure || KNOWN_FAILURES.has(e.name)) return { message: e.message, code: 1 };
  return { message: e.message, code: 1, stack: e.stack };
}

/**
 * `parseArgs`, with an unknown flag refused by the nearest flag the command takes
 * (`unknown option --ot; did you mean --out?`), or as it is when none is near.
 */
export function parseFlags<O extends Options>(args: string[], options: O): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    const unknown = (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '--([^'=]+)'/.exec((err as Error).message) : null;
    const near = unknown ? nearestName(unknown[1]!, Object.keys(options)) : null;
    if (near) throw new UsageError(`unknown option --${unknown![1]}; did you mean --${near}?`);
    throw err;
  }
}

/** Splits off what follows the first positional argument (for `passThrough`). */
function splitAtFirstPositional(argv: string[], options: Options): { own: string[]; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return { own: argv.slice(0, i), rest: argv.slice(i + 1) };
    if (a.startsWith('-')) {
      const name = a.replace(/^--?/, '').split('=')[0]!;
      const spec = Object.entries(options).find(([long, o]) => long === name || o.short === name)?.[1];
      if (spec?.type === 'string' && !a.includes('=')) i++;
      continue;
    }
    return { own: argv.slice(0, i + 1), rest: argv.slice(i + 1) };
  }
  return { own: argv, rest: [] };
}

/** Parses the command line, runs the command and exits with its code; `argv` defaults to the process's. */
export function runCommand<O extends Options = Record<never, never>>(command: Command<O>, argv: string[] = process.argv.slice(2)): void {
  const name = commandName(command.file);
  const main = async (): Promise<number> => {
    const options = { ...(command.options ?? {}), help: { type: 'boolean', short: 'h' } } as O & HelpOption;
    const { own, rest } = command.passThrough ? splitAtFirstPositional(argv, options) : { own: argv, rest: [] };
    const { values, positionals } = parseFlags(own, options) as Parsed<O>;
    if ((values as { help?: boolean }).help) {
      process.stdout.write(usageOf(command.file).replace(/\n*$/, '\n'));
      return 0;
    }
    const { min = 0, max = min } = command.positionals ?? {};
    if (positionals.length < min) throw new UsageError(`expected ${min === max ? min : `at least ${min}`} argument(s), got ${positionals.length}`);
    if (positionals.length > max) throw new UsageError(`unexpected argument ${positionals[max]}`);
    return (await command.run({ values, positionals, rest })) ?? 0;
  };
  // Exit once what was printed has been written out (a large output into a pipe included).
  const exit = (code: number) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  main().then(exit, (err: unknown) => {
    const { message, code, stack } = describeError(err);
    process.stderr.write(`${name}: ${message}\n${stack ? `${stack}\n` : ''}`);
    exit(code);
  });
}
