/**
 * Which packages a script needs, read from its source before it first runs: the harness's
 * `imports.py` parses the script and its files with Python's `ast` inside the sandbox (the
 * image's own standard library is left out there), and this file turns the imports into
 * distributions: the repository's own modules and the script's own files are never packages,
 * the rest maps through the import-name table.
 *
 * An import is any spelling that names its module literally: the statements, `importlib` and
 * `__import__` with a literal name, and the mock library's patchers whose target names a module
 * (`patch("pymongo.MongoClient")` imports pymongo when it starts). Each is installed up front like
 * an import statement. The result also says which module names the script's own source imports:
 * only those may be installed later, when a run fails with ModuleNotFoundError. A name a script
 * merely prints (or computes) never reaches the index.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { distributionForImport, normalizeDistributionName } from './packages';

export const ScannedImportSchema = z.object({
  /** Top-level module (`google`). */
  module: z.string(),
  /** The dotted name as imported (`google.cloud.storage`). */
  name: z.string(),
  file: z.string(),
  line: z.number().int(),
  guarded: z.boolean(),
  typeChecking: z.boolean(),
  /** Named by `importlib`, `__import__` or a mock patcher rather than by an import statement. */
  dynamic: z.boolean(),
});
export type ScannedImport = z.infer<typeof ScannedImportSchema>;

export const ImportScanSchema = z.object({
  imports: z.array(ScannedImportSchema),
  errors: z.array(z.object({ file: z.string(), message: z.string() })),
});
export type ImportScan = z.infer<typeof ImportScanSchema>;

/**
 * Scans already read, by the digest of the sources scanned. A scan is a function of its sources
 * alone (parsed with `ast` in a cleaned container of the same image), and an evaluation's script is
 * the same for every answer to a record (the answer travels apart, to its own process), so a
 * record's later answers skip the scan's `docker exec`. Bounded: the least recently used goes first.
 */
export class ImportScanCache {
  private readonly entries = new Map<string, ImportScan>();

  constructor(private readonly capacity = 512) {}

  /** The key of a set of sources (file name -> text), independent of their order. */
  static keyOf(sources: Readonly<Record<string, string>>): string {
    const hash = createHash('sha256');
    for (const name of Object.keys(sources).sort()) {
      const text = sources[name]!;
      hash.update(`${Buffer.byteLength(name)}:${name}${Buffer.byteLength(text)}:`).update(text);
    }
    return hash.digest('hex');
  }

  get(key: string): ImportScan | undefined {
    const scan = this.entries.get(key);
    if (scan !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, scan);
    }
    return scan;
  }

  set(key: string, scan: ImportScan): void {
    this.entries.delete(key);
    this.entries.set(key, scan);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface ImportPlan {
  /** Distributions of unguarded imports: installed before the first run. */
  required: string[];
  /** Distributions of imports inside `try/except ImportError`: installed too, dropped quietly when not installable. */
  optional: string[];
  /**
   * Every module the script's source imports (in any spelling), by dotted name and by top-level
   * name -> its distribution. Only these may be installed after a ModuleNotFoundError.
   */
  importable: Map<string, string>;
  notes: string[];
}

/** The script's own module name (`patch("eval_script.requests.get")` patches the script itself). */
export const SCRIPT_FILE = 'eval_script.py';

/** Top-level module names the run's extra files provide (`helper.py` -> helper, `pkg/x.py` -> pkg). */
export function ownModules(files: Record<string, string>): string[] {
  return [...new Set(Object.keys(files).filter((f) => f.endsWith('.py') || f.includes('/')).map((f) => f.split('/')[0]!.replace(/\.py$/, '')))];
}

/** The distribution for a missing module, if the script's source imports it (longest dotted prefix wins). */
export function importedDistribution(plan: Pick<ImportPlan, 'importable'>, missingModule: string): string | null {
  const parts = missingModule.split('.');
  for (let n = parts.length; n > 0; n--) {
    const hit = plan.importable.get(parts.slice(0, n).join('.'));
    if (hit) return hit;
  }
  return null;
}

export function planImports(scan: ImportScan, context: { localModules?: string[]; files?: Record<string, string> }): ImportPlan {
  const local = new Set([...(context.localModules ?? []), ...ownModules({ ...context.files, [SCRIPT_FILE]: '' })]);
  const required = new Set<string>();
  const optional = new Set<string>();
  const importable = new Map<string, string>();
  const notes: string[] = [];
  for (const e of scan.errors) notes.push(`imports of ${e.file} could not be read (${e.message}); nothing is installed for it up front`);
  for (const imp of scan.imports) {
    if (local.has(imp.module) || imp.typeChecking) continue;
    const distribution = distributionForImport(imp.name);
    if (!distribution) continue;
    importable.set(imp.name, distribution);
    if (!importable.has(imp.module)) importable.set(imp.module, distribution);
    (imp.guarded ? optional : required).add(distribution);
  }
  const requiredNames = new Set([...required].map(normalizeDistributionName));
  return {
    required: [...required].sort(),
    optional: [...optional].filter((d) => !requiredNames.has(normalizeDistributionName(d))).sort(),
    importable,
    notes,
  };
}
