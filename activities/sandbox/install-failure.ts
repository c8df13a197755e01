/**
 * What went wrong with an install, in words a reader of a rejection understands: which package,
 * and whether it was the time limit, the disk, a resolution conflict, no wheel for the sandbox's
 * platform, a name the index does not know, a failed source build or the network.
 *
 * Permanent failures (the same request will fail the same way) are remembered for a while so a
 * crawl does not ask the index again for every script; transient ones (time, disk, network,
 * cancellation) are not remembered at all.
 */
import { PYTHON_TARGET } from './python-target';

export type InstallFailureKind =
  | 'timeout'
  | 'disk'
  | 'conflict'
  | 'no-wheel'
  | 'not-found'
  | 'build-failed'
  | 'network'
  | 'cancelled'
  | 'infrastructure'
  | 'other';

export interface InstallFailure {
  kind: InstallFailureKind;
  /** The distributions the failure is about (normalised names), when the tool named them. */
  packages: string[];
  /** One or two sentences: what happened, which package, the decisive line of the tool's output. */
  message: string;
}

const PERMANENT: ReadonlySet<InstallFailureKind> = new Set(['conflict', 'no-wheel', 'not-found', 'build-failed']);

export function isPermanent(failure: InstallFailure): boolean {
  return PERMANENT.has(failure.kind);
}

const NAME = '[A-Za-z0-9][A-Za-z0-9._-]*';

function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

function unique(names: string[]): string[] {
  return [...new Set(names.map(normalise))];
}

/** The `cause:` paragraph of uv's error, on one line. */
function causeOf(stderr: string): string {
  const m = /cause: ([\s\S]*?)(?:\n\s*\n|\nhint:|$)/.exec(stderr);
  const text = (m?.[1] ?? stderr.trim().split('\n').filter((l) => l.trim()).pop() ?? '').replace(/\s+/g, ' ').trim();
  return text.length > 400 ? `${text.slice(0, 400)}...` : text;
}

const NETWORK = /error sending request|Failed to fetch|Failed to download|dns error|tcp connect error|Connection (?:refused|reset)|operation timed out|client error \(Connect\)|invalid peer certificate|Request failed after \d+ retries/i;
const DISK = /No space left on device|os error 28|Disk quota exceeded/i;

/** Reads uv's stderr after a failed `pip compile` or `pip install`. */
export function classifyUvError(stderr: string): InstallFailure {
  const cause = causeOf(stderr);
  if (DISK.test(stderr)) return { kind: 'disk', packages: [], message: `the disk is full: ${cause}` };

  const noWheel = [
    ...[...stderr.matchAll(new RegExp(`Wheels are required for \`(${NAME})\``, 'g'))].map((m) => m[1]!),
    ...[...stderr.matchAll(new RegExp(`(?:all versions of )?(${NAME})(?:[=<>!~]=?[^\\s]*)? (?:has|have) no (?:usable wheels|wheels with a matching)`, 'g'))].map((m) => m[1]!),
  ];
  if (noWheel.length > 0) {
    const packages = unique(noWheel);
    return {
      kind: 'no-wheel',
      packages,
      message: `no wheel of ${packages.join(', ')} for CPython ${PYTHON_TARGET.version} on ${PYTHON_TARGET.platform} (only source or other platforms' wheels): ${cause}`,
    };
  }
  const notFound = [...stderr.matchAll(new RegExp(`(${NAME}) was not found in the package registry`, 'g'))].map((m) => m[1]!);
  if (notFound.length > 0) {
    const packages = unique(notFound);
    return { kind: 'not-found', packages, message: `${packages.join(', ')} ${packages.length > 1 ? 'are' : 'is'} not on the package index` };
  }
  if (/No solution found/.test(stderr)) {
    const tooNew = new RegExp(`(${NAME})==[^ ]+ (?:only supports|depends on Python)`).exec(stderr);
    const named = [...cause.matchAll(new RegExp(`(?:you require|Because(?: only)?|depend(?:s)? on) (${NAME})(?=[=<>!~ ,]|$)`, 'g'))].map((m) => m[1]!);
    const packages = unique(tooNew ? [tooNew[1]!] : named.filter((n) => !/^(?:only|all|the|we|there|you)$/.test(n)));
    return { kind: 'conflict', packages, message: `the requirements cannot be resolved together for CPython ${PYTHON_TARGET.version}: ${cause}` };
  }
  if (NETWORK.test(stderr)) return { kind: 'network', packages: [], message: `the package index could not be reached: ${cause}` };
  return { kind: 'other', packages: [], message: cause || 'uv failed without saying why' };
}

/** The downloads uv started and had not finished when it was stopped, e.g. `torch (539.0MiB)`. */
export class DownloadTracker {
  private readonly open = new Map<string, string>();

  line(line: string): void {
    const start = /^\s*Downloading (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (start) this.open.set(start[1]!, start[2] ? `${start[1]} (${start[2]})` : start[1]!);
    const done = /^\s*Downloaded (\S+)/.exec(line);
    if (done) this.open.delete(done[1]!);
  }

  get inFlight(): string[] {
    return [...this.open.values()];
  }
}

export function timeoutFailure(limitSec: number, step: string, downloads: string[]): InstallFailure {
  const during = downloads.length > 0 ? ` while downloading ${downloads.join(', ')}` : ` during ${step}`;
  return {
    kind: 'timeout',
    packages: unique(downloads.map((d) => d.split(' ')[0]!)),
    message: `the install time limit of ${limitSec}s was reached${during}`,
  };
}

export function describeFailure(requirements: string[], failure: InstallFailure): string {
  return `installing ${requirements.join(' ')} failed (${failure.kind}): ${failure.message}`;
}
