/**
 * Packages as of the code's date: a script from a repository is run with the releases that were
 * on the index when its commit was made (plus a grace period, `sandbox.packages.asOfGraceSec`),
 * which is what the repository's own users installed; a module a later release renamed or removed
 * is still there. uv resolves with `--exclude-newer <cutoff>`; a package with no installable
 * release by then is let through at its newest release alone (`--exclude-newer-package
 * <name>=false`), and when the dated resolution still fails every package is resolved at its
 * newest release. Which it was is recorded per package (`InstalledPackage.asOf`).
 *
 * The cutoff is the commit date plus the grace period, rounded up to the next midnight UTC, so the
 * scripts of one day share their package sets. It is formatted here from a parsed date: the
 * date's own text never reaches uv.
 */
import { isPermanent, type InstallFailure } from './install-failure';
import { normalizeDistributionName } from './packages';

const DAY_MS = 86_400_000;
/** An ISO 8601 date, or date and time with an optional zone: what GitHub, git and a dataset give. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
/** Dated resolutions retried with more packages let through, at most, before giving the date up. */
const MAX_EXEMPTION_ROUNDS = 3;

/** Whether `date` is a date this module accepts (ISO 8601, years 1990 to 2199). */
export function isCodeDate(date: string): boolean {
  if (!ISO_DATE.test(date.trim())) return false;
  const year = Number(date.trim().slice(0, 4));
  return year >= 1990 && year < 2200 && Number.isFinite(Date.parse(date.trim()));
}

/** The cutoff for code of `date`: date plus `graceSec`, rounded up to midnight UTC; null for a date that is not one. */
export function asOfCutoff(date: string, graceSec: number): string | null {
  if (!isCodeDate(date)) return null;
  const end = Date.parse(date.trim()) + Math.max(0, graceSec) * 1000;
  return new Date(Math.ceil(end / DAY_MS) * DAY_MS).toISOString().replace('.000Z', 'Z');
}

/** The packages uv says its cutoff filtered out (`hint: \`x\` was filtered by \`exclude-newer\``). */
export function filteredByCutoff(stderr: string): string[] {
  return [...stderr.matchAll(/`([A-Za-z0-9][A-Za-z0-9._-]*)` was filtered by `exclude-newer`/g)].map((m) => normalizeDistributionName(m[1]!));
}

/**
 * One install's dated resolution: the uv flags for the next attempt, what to do after a failed
 * one, and for each package whether it was resolved as of the cutoff.
 */
export class AsOfResolution {
  /** Packages let through at their newest release (normalised names). */
  readonly exempt = new Set<string>();
  /** Packages whose pinned version came from a local wheel (a source build, a find-links folder): no upload date vouches for it. */
  private readonly local = new Set<string>();
  /** Whether the cutoff still holds (false: no date, or the dated resolution was given up). */
  dated: boolean;
  private readonly reasons: string[] = [];
  private fallback: string | null = null;
  private rounds = 0;

  constructor(readonly cutoff: string | null) {
    this.dated = cutoff !== null;
  }

  /** uv's flags for the next resolution. */
  uvArgs(): string[] {
    if (!this.dated || !this.cutoff) return [];
    return ['--exclude-newer', this.cutoff, ...[...this.exempt].sort().flatMap((name) => ['--exclude-newer-package', `${name}=false`])];
  }

  /**
   * After a failed resolution: 'retry' with more packages at their newest release, or without the
   * date at all; 'final' when the failure stands (no date in force, a transient failure, or a name
   * the index does not know at any date).
   */
  next(failure: InstallFailure, stderr: string): 'retry' | 'final' {
    if (!this.dated) return 'final';
    if (failure.kind === 'not-found' || (!isPermanent(failure) && failure.kind !== 'other')) return 'final';
    const names = [...new Set([...filteredByCutoff(stderr), ...failure.packages.map(normalizeDistributionName)])].filter((n) => !this.exempt.has(n));
    if (names.length > 0 && this.rounds < MAX_EXEMPTION_ROUNDS) {
      this.rounds += 1;
      for (const name of names) this.exempt.add(name);
      this.reasons.push(`${names.join(', ')}: ${failure.message}`);
      return 'retry';
    }
    this.dated = false;
    this.fallback = failure.message;
    return 'retry';
  }

  /**
   * After a resolution under the date: the pins (`name==version`) whose wheel is one of `localWheels`
   * (file names). uv applies no cutoff to a local file, so such a version is not vouched for as of
   * the date: it is recorded as a newest release.
   */
  pinnedFromLocalWheels(pinned: string[], localWheels: string[]): void {
    if (!this.dated) return;
    const local = new Set(localWheels.filter((f) => f.endsWith('.whl')).map((f) => f.split('-')).filter((p) => p.length >= 5).map((p) => `${normalizeDistributionName(p[0]!)}==${p[1]}`));
    for (const pin of pinned) {
      const m = /^([A-Za-z0-9._-]+)==(\S+)$/.exec(pin);
      if (m && local.has(`${normalizeDistributionName(m[1]!)}==${m[2]}`)) this.local.add(normalizeDistributionName(m[1]!));
    }
  }

  /** The cutoff a package was resolved under, or undefined for its newest release. */
  asOfOf(name: string): string | undefined {
    const n = normalizeDistributionName(name);
    return this.dated && this.cutoff && !this.exempt.has(n) && !this.local.has(n) ? this.cutoff : undefined;
  }

  /** The install's note on how versions were chosen; null when no date was asked. */
  note(): string | null {
    if (!this.cutoff) return null;
    if (!this.dated) return `packages at their newest releases: the resolution as of ${this.cutoff} failed (${this.fallback})`;
    const local = this.local.size > 0 ? `; ${[...this.local].sort().join(', ')} from a local wheel, which has no upload date` : '';
    if (this.exempt.size === 0) return `packages as of ${this.cutoff}${local}`;
    return `packages as of ${this.cutoff}, except ${[...this.exempt].sort().join(', ')} at the newest release (${this.reasons.join('; ')})${local}`;
  }
}
