/**
 * The package store: one uv cache for the whole machine's worth of packages, and one environment
 * per requirement set made of hard links into it, so a package is stored once however many sets
 * hold it and a set whose wheels are cached is ready in milliseconds.
 *
 *   <root>/uv-cache/        uv's cache (downloaded wheels, unpacked once)
 *   <root>/envs/<key>/      one environment per requirement set; mounted read-only into runs
 *   <root>/wheelhouse/      wheels built from source in the sandbox (a find-links folder for uv)
 *   <root>/sdists/          source archives downloaded for those builds
 *   <root>/pyc/             byte code of the sources, compiled once in the sandbox (bytecode.ts)
 *
 * An install resolves the set with uv for the image's Python and platform, wheels only
 * (`pip compile --no-build`; offline from the cache first, then against the index), as of a date
 * when one is given (as-of.ts: the code's commit date plus a grace period; a set resolved as of a
 * date is another set than the same names at their newest releases, with its own environment and
 * its own remembered failure), drops distributions that only serve GPUs and that nothing imports
 * at load time (triton), then links the pinned wheels into a temporary folder with
 * `pip install --no-deps --target`, renamed into place when complete. A distribution with no
 * wheel for the platform is built from its source archive in an offline sandbox container
 * (source-build.ts) and the set resolved again. Nothing here runs package code.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import type { Config } from '../../temporal.config';
import { PACKAGES_MOUNT, type SandboxLimits } from './container-spec';
import { isDockerUnavailable } from './docker-errors';
import { validateRequirement } from './install-commands';
import {
  DownloadTracker,
  classifyUvError,
  describeFailure,
  isPermanent,
  timeoutFailure,
  type InstallFailure,
} from './install-failure';
import { normalizeDistributionName } from './packages';
import { PYTHON_TARGET } from './python-target';
import { AsOfResolution } from './as-of';
import { precompileEnvironment } from './bytecode';
import { DEFAULT_INDEX, buildRequirements, buildWheelInSandbox, findSourceArchive, type BuildOutcome } from './source-build';
import { SDIST_READ_LIMITS, readSdist } from './sdist-archive';
import { InstalledPackageSchema, type InstalledPackage } from './schema';
import { resolveUvBinary, runUv, uvEnvironment, type UvOutcome } from './uv';

const MANIFEST = '.repost-packages.json';
/** Sources built per install at most: a chain of source-only dependencies is bounded too. */
const MAX_BUILDS_PER_INSTALL = 4;
/**
 * Distributions that only drive GPUs and that no CPU import loads: left out of every set.
 * (PyPI's Linux torch links the CUDA runtime libraries, so those stay; triton is only
 * imported when compiling kernels for a GPU.)
 */
export const GPU_ONLY_DISTRIBUTIONS: ReadonlySet<string> = new Set(['triton', 'pytorch-triton', 'pytorch-triton-rocm', 'pytorch-triton-xpu']);

const ManifestSchema = z.object({
  pythonTag: z.string(),
  requirements: z.array(z.string()),
  pinned: z.array(z.string()),
  packages: z.array(InstalledPackageSchema),
  builtFromSource: z.array(z.string()).default([]),
  /** What source builds left besides their wheel, each refused with its reason. */
  buildNotes: z.array(z.string()).default([]),
  leftOut: z.array(z.string()).default([]),
  /** The cutoff the set was asked for (null: the newest releases); each package says whether it held. */
  asOf: z.string().nullable().default(null),
  /** How the versions were chosen, for the run's notes (as of the cutoff, which packages at their newest, or why not). */
  resolutionNotes: z.array(z.string()).default([]),
  bytecode: z.object({ linked: z.number(), compiled: z.number(), skipped: z.string().nullable() }).optional(),
});

export interface PackageSet {
  key: string;
  requirements: string[];
  /** The cutoff the set was resolved as of (null: the newest releases); `packages[].asOf` says which held. */
  asOf: string | null;
  packages: InstalledPackage[];
  /** Where the set lives inside sandbox containers. */
  containerPath: string;
  hostPath: string;
  /** Remarks on how the set was made (how versions were chosen, what a source build left and was refused). */
  notes: string[];
}

export type EnsureResult = { ok: true; set: PackageSet } | { ok: false; failure: InstallFailure; error: string };

export type PackageSettings = Config['sandbox']['packages'];

export interface PackageStoreOptions {
  docker: Docker;
  image: string;
  /** The store's root folder. */
  root: string;
  workerId: string;
  settings: PackageSettings;
  /** Limits of a source build's container (those of a script run). */
  limits: SandboxLimits;
  /** The clock a remembered failure's expiry is read on (default: the system's); tests inject one. */
  now?: () => number;
}

export interface EnsureOptions {
  signal?: AbortSignal;
  /** Build source-only distributions in the sandbox (off for a build's own requirements). */
  allowBuilds?: boolean;
  /** Resolve as of this cutoff (as-of.ts's `asOfCutoff`); unset or null: the newest releases. */
  asOf?: string | null;
}

/** `Name[extra]>=1` -> `name[extra]>=1`, the spelling hashed and shown. */
export function canonicalRequirement(requirement: string): string {
  const valid = validateRequirement(requirement);
  if (!valid) throw new Error(`not a valid requirement: ${requirement}`);
  const m = /^([A-Za-z0-9._-]+)(.*)$/.exec(valid)!;
  return normalizeDistributionName(m[1]!) + m[2]!;
}

export function canonicalRequirements(requirements: string[]): string[] {
  return [...new Set(requirements.map(canonicalRequirement))].sort();
}

/**
 * The store's key of a requirement set: the Python target, the canonical requirements and, for a
 * set resolved as of a date, that cutoff (the same names at their newest releases are another set).
 */
export function requirementSetKey(requirements: string[], asOf: string | null = null): string {
  const set = { python: PYTHON_TARGET.tag, requirements: canonicalRequirements(requirements), ...(asOf ? { asOf } : {}) };
  return createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 20);
}

/** The distribution a requirement names, normalised. */
export function requirementName(requirement: string): string {
  return normalizeDistributionName(/^[A-Za-z0-9._-]+/.exec(requirement)?.[0] ?? requirement);
}

/** Reads name and version of every distribution installed in a folder. */
export function installedDistributions(dir: string): InstalledPackage[] {
  const out: InstalledPackage[] = [];
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.endsWith('.dist-info') && !entry.endsWith('.egg-info')) continue;
    const metadataFile = ['METADATA', 'PKG-INFO'].map((f) => path.join(dir, entry, f)).find((f) => fs.existsSync(f));
    if (!metadataFile) continue;
    const head = fs.readFileSync(metadataFile, 'utf8').split(/\r?\n\r?\n/)[0]!;
    const name = /^Name:\s*(.+)$/m.exec(head)?.[1]?.trim();
    const version = /^Version:\s*(.+)$/m.exec(head)?.[1]?.trim();
    if (name && version) out.push({ name, version });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

interface Flight {
  promise: Promise<EnsureResult>;
  controller: AbortController;
  waiters: number;
}

function failed(requirements: string[], failure: InstallFailure): EnsureResult {
  return { ok: false, failure, error: describeFailure(requirements, failure) };
}

export class PackageStore {
  readonly envsDir: string;
  readonly cacheDir: string;
  /**
   * uv's cache for sets resolved as of a date, beside the other: a resolution from the cache alone
   * picks the highest version whose metadata it holds, so the old releases a dated set brings in
   * must never be what a set of the newest releases finds there (nor the reverse).
   */
  readonly datedCacheDir: string;
  readonly wheelhouse: string;
  private readonly sdistDir: string;
  private readonly pycStore: string;
  private readonly home: string;
  private readonly uv: string;
  private readonly inFlight = new Map<string, Flight>();
  /** Permanent failures (no wheel, unknown name, conflict, failed build) until they expire. */
  private readonly failures = new Map<string, { result: EnsureResult; until: number }>();

  constructor(private readonly options: PackageStoreOptions) {
    const { root, settings } = options;
    this.envsDir = path.join(root, 'envs');
    this.cacheDir = settings.uvCacheDir ?? path.join(root, 'uv-cache');
    this.datedCacheDir = `${this.cacheDir.replace(/\/+$/, '')}-dated`;
    this.wheelhouse = path.join(root, 'wheelhouse');
    this.sdistDir = path.join(root, 'sdists');
    this.pycStore = path.join(root, 'pyc');
    this.home = path.join(root, '.uv-home');
    for (const dir of [this.envsDir, this.cacheDir, this.datedCacheDir, this.wheelhouse, this.home]) fs.mkdirSync(dir, { recursive: true });
    this.uv = resolveUvBinary(settings.uvPath);
  }

  get root(): string {
    return this.options.root;
  }

  /**
   * Deletes temporary folders older than two install time limits (left by a crashed worker),
   * and the per-set copies an earlier layout of the store kept at its top level.
   */
  removeAbandonedInstalls(): number {
    const cutoff = Date.now() - 2 * this.options.settings.installTimeoutSec * 1000;
    let removed = 0;
    const sweep = (dir: string, stale: (entry: string, full: string) => boolean) => {
      for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        const full = path.join(dir, entry);
        try {
          if (stale(entry, full)) {
            fs.rmSync(full, { recursive: true, force: true });
            removed += 1;
          }
        } catch {
          // Already gone: another worker cleaned it.
        }
      }
    };
    const old = (full: string) => fs.statSync(full).mtimeMs < cutoff;
    sweep(this.envsDir, (e, full) => e.startsWith('.tmp-') && old(full));
    sweep(this.root, (e, full) => (e.startsWith('.tmp-') || e.startsWith('.build-') || e.startsWith('.pyc-')) && old(full));
    sweep(this.root, (e, full) => /^[0-9a-f]{20}$/.test(e) && fs.existsSync(path.join(full, MANIFEST)));
    return removed;
  }

  /** The installed set for these requirements (as of `asOf`, or at their newest releases), if it is already in the store. */
  lookup(requirements: string[], asOf: string | null = null): PackageSet | null {
    const key = requirementSetKey(requirements, asOf);
    const hostPath = path.join(this.envsDir, key);
    try {
      const manifest = ManifestSchema.parse(JSON.parse(fs.readFileSync(path.join(hostPath, MANIFEST), 'utf8')));
      if ((manifest.asOf ?? null) !== asOf) return null;
      return {
        key,
        requirements: manifest.requirements,
        asOf: manifest.asOf,
        packages: manifest.packages,
        hostPath,
        containerPath: `${PACKAGES_MOUNT}/${key}`,
        notes: [...manifest.resolutionNotes, ...manifest.buildNotes],
      };
    } catch {
      return null;
    }
  }

  /**
   * Installs the set unless it is in the store. Concurrent asks for one set share one install,
   * which stops (its uv process or build container killed) only when every asker has cancelled.
   */
  ensure(requirements: string[], options: EnsureOptions = {}): Promise<EnsureResult> {
    const canonical = canonicalRequirements(requirements);
    const asOf = options.asOf ?? null;
    const key = requirementSetKey(canonical, asOf);
    const cached = this.lookup(canonical, asOf);
    if (cached) return Promise.resolve({ ok: true, set: cached });
    const remembered = this.failures.get(key);
    const now = this.options.now ?? Date.now;
    if (remembered && remembered.until > now()) return Promise.resolve(remembered.result);
    this.failures.delete(key);

    let flight = this.inFlight.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = this.install(key, canonical, controller.signal, options.allowBuilds ?? true, asOf).then((result) => {
        if (!result.ok && isPermanent(result.failure)) {
          this.failures.set(key, { result, until: now() + this.options.settings.failureMemorySec * 1000 });
        }
        return result;
      });
      const created: Flight = { promise, controller, waiters: 0 };
      flight = created;
      this.inFlight.set(key, created);
      void promise.finally(() => this.inFlight.delete(key));
    }
    const shared = flight;
    shared.waiters += 1;
    return new Promise((resolve) => {
      let settled = false;
      const leave = () => {
        if (settled) return;
        settled = true;
        shared.waiters -= 1;
        if (shared.waiters === 0) shared.controller.abort();
        resolve(failed(canonical, { kind: 'cancelled', packages: [], message: 'the install was cancelled' }));
      };
      if (options.signal?.aborted) return leave();
      options.signal?.addEventListener('abort', leave, { once: true });
      void shared.promise.then((result) => {
        options.signal?.removeEventListener('abort', leave);
        if (settled) return;
        settled = true;
        shared.waiters -= 1;
        resolve(result);
      });
    });
  }

  private uvArgs(): string[] {
    const index = this.options.settings.indexUrl ?? process.env.UV_DEFAULT_INDEX ?? process.env.UV_INDEX_URL ?? process.env.PIP_INDEX_URL;
    return [
      '--python-version', PYTHON_TARGET.version,
      '--python-platform', PYTHON_TARGET.platform,
      '--no-build',
      '--find-links', this.wheelhouse,
      ...this.options.settings.findLinks.flatMap((dir) => ['--find-links', dir]),
      ...(index ? ['--default-index', index] : []),
    ];
  }

  /** The wheel files uv finds besides the index: the wheelhouse's source builds and the find-links folders'. */
  private localWheels(): string[] {
    return [this.wheelhouse, ...this.options.settings.findLinks].flatMap((dir) => {
      try {
        return fs.readdirSync(dir);
      } catch {
        return [];
      }
    });
  }

  private indexUrl(): string {
    return this.options.settings.indexUrl ?? process.env.UV_DEFAULT_INDEX ?? process.env.UV_INDEX_URL ?? process.env.PIP_INDEX_URL ?? DEFAULT_INDEX;
  }

  private async uvRun(args: string[], deadline: number, signal: AbortSignal, stdin?: string, onLine?: (l: string) => void, cacheDir = this.cacheDir): Promise<UvOutcome> {
    return runUv(this.uv, args, { env: uvEnvironment({ cacheDir, home: this.home }), stdin, deadline, signal, onLine });
  }

  private async install(key: string, requirements: string[], signal: AbortSignal, allowBuilds: boolean, asOf: string | null): Promise<EnsureResult> {
    const limitSec = this.options.settings.installTimeoutSec;
    const deadline = Date.now() + limitSec * 1000;
    const cancelled = () => failed(requirements, { kind: 'cancelled', packages: [], message: 'the install was cancelled' });
    const stopped = (o: UvOutcome, step: string, downloads: string[] = []): EnsureResult | null => {
      if (o.ended === 'cancelled') return cancelled();
      if (o.ended === 'timeout') return failed(requirements, timeoutFailure(limitSec, step, downloads));
      if (o.ended === 'spawn-error') return failed(requirements, { kind: 'other', packages: [], message: `uv could not be started (${o.stderr}); run scripts/bootstrap.sh or set sandbox.packages.uvPath` });
      return null;
    };

    // 1. Resolve, wheels only (as of the date, when one is given); build what has no wheel, then resolve again.
    const built: string[] = [];
    const buildNotes: string[] = [];
    const dated = new AsOfResolution(asOf);
    // A set as of a date has its own cache (see datedCacheDir) and always asks the index: what the
    // cache holds from another date is not the newest release before this one.
    const cacheDir = asOf ? this.datedCacheDir : this.cacheDir;
    let pinned: string[] = [];
    for (;;) {
      // From what the cache already knows first (no request at all: a warm set takes milliseconds);
      // the index is asked only when that is not enough.
      const compile = (offline: boolean) =>
        this.uvRun(
          ['pip', 'compile', '-', '--no-header', '--no-annotate', '--quiet', ...(offline ? ['--offline'] : []), ...this.uvArgs(), ...dated.uvArgs()],
          deadline,
          signal,
          requirements.join('\n') + '\n',
          undefined,
          cacheDir,
        );
      let compiled = await compile(!asOf);
      if (compiled.ended === 'exit' && compiled.code !== 0 && !asOf) compiled = await compile(false);
      const stop = stopped(compiled, 'resolution');
      if (stop) return stop;
      if (compiled.code === 0) {
        pinned = compiled.stdout.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
        break;
      }
      const failure = classifyUvError(compiled.stderr);
      // Under a date, a package without a wheel by then is first let through at its newest release;
      // only one that has no wheel even then is built from source.
      const needsBuild = failure.kind === 'no-wheel' && failure.packages.every((p) => dated.exempt.has(p));
      if (dated.dated && !needsBuild) {
        if (dated.next(failure, compiled.stderr) === 'retry') continue;
        return failed(requirements, failure);
      }
      const buildable = failure.kind === 'no-wheel' && allowBuilds && this.options.settings.buildFromSource && failure.packages.every((p) => !built.includes(p));
      if (!buildable || built.length + failure.packages.length > MAX_BUILDS_PER_INSTALL) return failed(requirements, failure);
      for (const name of failure.packages) {
        const outcome = await this.buildFromSource(name, requirements, deadline, limitSec, signal);
        buildNotes.push(...outcome.refused.map((r) => `the source build of ${name} also left ${r}: refused`));
        if (outcome.failure) return failed(requirements, outcome.failure);
        built.push(name);
      }
    }
    dated.pinnedFromLocalWheels(pinned, this.localWheels());
    const leftOut = pinned.filter((p) => GPU_ONLY_DISTRIBUTIONS.has(requirementName(p)));
    pinned = pinned.filter((p) => !leftOut.includes(p));

    // 2. Link the pinned wheels (downloaded into the cache on first use) into a fresh folder.
    fs.mkdirSync(this.envsDir, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(this.envsDir, `.tmp-${key}-`));
    // The store's own files live beside the environment, never inside it while wheels are linked in.
    const pinnedFile = `${tmp}.pinned.txt`;
    try {
      fs.writeFileSync(pinnedFile, pinned.join('\n') + '\n');
      const downloads = new DownloadTracker();
      const link = (offline: boolean) =>
        this.uvRun(
          ['pip', 'install', '--target', tmp, '--no-deps', '--link-mode', 'hardlink', '-r', pinnedFile, ...(offline ? ['--offline'] : []), ...this.uvArgs()],
          deadline,
          signal,
          undefined,
          (line) => downloads.line(line),
          cacheDir,
        );
      let installed = await link(true);
      if (installed.ended === 'exit' && installed.code !== 0) installed = await link(false);
      const stop = stopped(installed, 'the download', downloads.inFlight);
      if (stop) return stop;
      if (installed.code !== 0) return failed(requirements, classifyUvError(installed.stderr));
      // Entry-point scripts point at the host's interpreter; nothing in the sandbox runs them.
      fs.rmSync(path.join(tmp, 'bin'), { recursive: true, force: true });
      fs.chmodSync(tmp, 0o755);
      const bytecode = await precompileEnvironment({
        docker: this.options.docker,
        image: this.options.image,
        limits: this.options.limits,
        envsDir: this.envsDir,
        workerId: this.options.workerId,
        envDir: tmp,
        pycStore: this.pycStore,
        deadline,
        signal,
      });
      if (signal.aborted) return cancelled();
      const packages = installedDistributions(tmp).map((p) => {
        const cutoff = dated.asOfOf(p.name);
        return cutoff ? { ...p, asOf: cutoff } : p;
      });
      const note = dated.note();
      const manifest = {
        pythonTag: PYTHON_TARGET.tag,
        requirements,
        asOf,
        pinned,
        packages,
        builtFromSource: built,
        buildNotes,
        resolutionNotes: note ? [note] : [],
        leftOut,
        bytecode,
      };
      // Written beside and renamed in: a file of that name a wheel shipped is a hard link into uv's
      // cache, shared by every environment holding that wheel; the rename replaces the link, a
      // write through it would change them all.
      const manifestPart = `${tmp}.manifest.json`;
      fs.writeFileSync(manifestPart, JSON.stringify(manifest, null, 2), { flag: 'wx' });
      fs.renameSync(manifestPart, path.join(tmp, MANIFEST));
      fs.chmodSync(tmp, 0o755);
      const final = path.join(this.envsDir, key);
      try {
        fs.renameSync(tmp, final);
      } catch (err) {
        // Another worker finished the same set first: theirs is as good as ours.
        if (!fs.existsSync(path.join(final, MANIFEST))) throw err;
      }
      return { ok: true, set: this.lookup(requirements, asOf)! };
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return failed(requirements, { kind: 'disk', packages: [], message: `the disk is full: ${e.message}` });
      throw err;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(pinnedFile, { force: true });
      fs.rmSync(`${tmp}.manifest.json`, { force: true });
    }
  }

  /**
   * Builds one source-only distribution into the wheelhouse: the failure (null when built), and
   * what else the build left, each refused with its reason.
   */
  private async buildFromSource(name: string, requirements: string[], deadline: number, limitSec: number, signal: AbortSignal): Promise<{ failure: InstallFailure | null; refused: string[] }> {
    const outcome = await this.buildOne(name, requirements, deadline, limitSec, signal);
    return 'refused' in outcome ? { failure: outcome.ok ? null : outcome.failure!, refused: outcome.refused } : { failure: outcome, refused: [] };
  }

  private async buildOne(name: string, requirements: string[], deadline: number, limitSec: number, signal: AbortSignal): Promise<InstallFailure | BuildOutcome> {
    const own = requirements.find((r) => requirementName(r) === name);
    const specifier = own ? own.replace(/^[A-Za-z0-9._-]+(\[[^\]]*\])?/, '') : '';
    let archive;
    try {
      archive = await findSourceArchive({ name, specifier, findLinks: this.options.settings.findLinks, indexUrl: this.indexUrl(), downloadDir: this.sdistDir, deadline, signal });
    } catch (err) {
      if (signal.aborted) return { kind: 'cancelled', packages: [name], message: 'the install was cancelled' };
      if (Date.now() >= deadline) return timeoutFailure(limitSec, `the download of ${name}'s source`, [name]);
      const status = (err as { status?: number }).status;
      if (status === 404) return { kind: 'not-found', packages: [name], message: `${name} has no wheel for the sandbox and no source archive on the index` };
      return { kind: 'network', packages: [name], message: `the source archive of ${name} could not be fetched: ${(err as Error).message}` };
    }
    if (!archive) return { kind: 'no-wheel', packages: [name], message: `${name} publishes no wheel for CPython ${PYTHON_TARGET.version} on ${PYTHON_TARGET.platform} and no source archive${specifier ? ` matching ${specifier}` : ''}` };

    // The archive is read in-process and bounded; what it holds never reaches a host command.
    const contents = await readSdist(archive.file, { name: archive.name, version: archive.version }, SDIST_READ_LIMITS, signal).catch((err: Error) => {
      if (signal.aborted) return null;
      throw err;
    });
    if (!contents) return { kind: 'cancelled', packages: [name], message: 'the install was cancelled' };
    if (!contents.ok) {
      return { kind: 'build-failed', packages: [name], message: `the source archive of ${name} ${archive.version} (${path.basename(archive.file)}) is refused: ${contents.reason}` };
    }
    const { requirements: buildRequires } = buildRequirements(contents.pyproject);
    const env = await this.ensure(buildRequires, { signal, allowBuilds: false });
    if (!env.ok) {
      return { kind: isPermanent(env.failure) ? 'build-failed' : env.failure.kind, packages: [name], message: `the build requirements of ${name} (${buildRequires.join(' ')}) could not be installed: ${env.failure.message}` };
    }
    try {
      return await buildWheelInSandbox({
        docker: this.options.docker,
        image: this.options.image,
        limits: this.options.limits,
        envsDir: this.envsDir,
        workerId: this.options.workerId,
        archive,
        buildEnvPath: env.set.containerPath,
        wheelhouse: this.wheelhouse,
        scratchDir: this.root,
        deadline,
        limitSec,
        signal,
      });
    } catch (err) {
      if (isDockerUnavailable(err)) return { kind: 'infrastructure', packages: [name], message: `the Docker engine failed during the build of ${name}: ${(err as Error).message}` };
      throw err;
    }
  }
}
