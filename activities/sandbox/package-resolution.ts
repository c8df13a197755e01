/**
 * The packages of one run, resolved in rounds: what the request names and what the script's
 * imports need go into one resolution; what cannot be installed is dropped with a note (a
 * transient failure stops the run as `infrastructure` instead); after a run that failed for a
 * missing module the script's source imports, that module's distribution is added and resolved
 * again. At most `packages.resolutionRounds` resolutions per run.
 */
import { importedDistribution, type ImportPlan } from './import-scan';
import { validateRequirement } from './install-commands';
import { isPermanent } from './install-failure';
import { requirementName, type EnsureResult, type PackageSet } from './package-store';
import { distributionForImport } from './packages';
import { infrastructureResult } from './run-request';
import type { SandboxResult } from './schema';

export class PackageResolution {
  /** What happened to the packages, for the run's notes. */
  readonly notes: string[] = [];
  /** The set the script runs with (null: none). */
  set: PackageSet | null = null;
  private readonly wanted = new Map<string, { requirement: string; optional: boolean }>();
  /** Every distribution ever asked for: a module still missing after one was tried is not tried again. */
  private readonly tried = new Set<string>();
  private rounds = 0;
  private exhausted = false;

  constructor(
    private readonly maxRounds: number,
    /** Installs (or finds) a requirement set. */
    private readonly install: (requirements: string[]) => Promise<EnsureResult>,
  ) {}

  /** Requirements known up front: each that is a package name with an optional version. */
  wantRequirements(requirements: string[]): void {
    for (const r of requirements) {
      const valid = validateRequirement(r);
      if (valid) this.want(valid, false);
      else this.notes.push(`requirement ${JSON.stringify(r)} ignored: not a package name with an optional version`);
    }
  }

  /** The distributions the script's imports need (top level) or may use (guarded). */
  wantImports(plan: ImportPlan): void {
    this.notes.push(...plan.notes);
    for (const d of plan.required) if (!this.wanted.has(requirementName(d))) this.want(d, false);
    for (const d of plan.optional) if (!this.wanted.has(requirementName(d))) this.want(d, true);
  }

  private want(requirement: string, optional: boolean): void {
    this.wanted.set(requirementName(requirement), { requirement, optional });
    this.tried.add(requirementName(requirement));
  }

  /** Resolves what is wanted, dropping what cannot be installed, one round per resolution. Null: go on; a result: stop with it. */
  async resolve(): Promise<SandboxResult | null> {
    const { wanted, notes } = this;
    while (wanted.size > 0) {
      if (this.rounds >= this.maxRounds) {
        // The last set that installed stays; what came after it is left out.
        const current = this.set;
        const have = new Set((current?.requirements ?? []).map(requirementName));
        const missing = [...wanted.entries()].filter(([k]) => !have.has(k));
        for (const [k] of missing) wanted.delete(k);
        notes.push(`the limit of ${this.maxRounds} resolution rounds per script is reached; running without ${missing.map(([, w]) => w.requirement).join(' ')}`);
        this.exhausted = true;
        return null;
      }
      this.rounds += 1;
      const requirements = [...wanted.values()].map((w) => w.requirement);
      const ensured = await this.install(requirements);
      if (ensured.ok) {
        this.set = ensured.set;
        notes.push(...ensured.set.notes);
        return null;
      }
      const { failure } = ensured;
      if (!isPermanent(failure)) {
        // Time, disk, network or the engine: not the script's fault, and a later attempt may succeed.
        return infrastructureResult(`package install failed: ${ensured.error}`, [...notes]);
      }
      const named = failure.packages.filter((p) => wanted.has(p));
      const dropped = named.length > 0 ? named : [...wanted.entries()].filter(([, w]) => w.optional).map(([k]) => k);
      if (dropped.length === 0) {
        notes.push(`${ensured.error}; running without packages`);
        this.set = null;
        return null;
      }
      for (const name of dropped) {
        const entry = wanted.get(name)!;
        wanted.delete(name);
        notes.push(`${entry.optional ? 'optional package' : 'package'} ${entry.requirement} not installed: ${failure.message}`);
      }
    }
    this.set = null;
    return null;
  }

  /**
   * After a run that failed for `missing` (a module name, or null when none was named): installs
   * the distribution the script's source imports it by. 'again': run the script again; 'stop':
   * nothing more to try (the notes say why); a result: stop with it.
   */
  async installMissing(missing: string | null, plan: ImportPlan, localModules: string[] | undefined): Promise<'again' | 'stop' | SandboxResult> {
    const { notes } = this;
    if (!missing) return 'stop';
    const top = missing.split('.')[0]!;
    if (localModules?.includes(top)) {
      notes.push(`module ${missing} belongs to the repository, not to a package: the script must carry that code itself`);
      return 'stop';
    }
    const distribution = importedDistribution(plan, missing);
    if (!distribution) {
      notes.push(
        distributionForImport(missing)
          ? `module ${missing} is missing; the script's source does not import it, so no package is installed for it`
          : `module ${missing} is missing but is not installable (standard library or invalid name)`,
      );
      return 'stop';
    }
    const name = requirementName(distribution);
    if (this.tried.has(name)) {
      notes.push(`module ${missing} is still missing after trying to install ${distribution}`);
      return 'stop';
    }
    this.want(distribution, false);
    const stop = await this.resolve();
    if (stop) return stop;
    if (this.exhausted || !this.wanted.has(name)) return 'stop'; // it could not be installed: the notes say why
    notes.push(`installed ${distribution} for module ${missing}`);
    return 'again';
  }
}
