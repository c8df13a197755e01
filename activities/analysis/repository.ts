/**
 * A parsed repository: every readable Python 3 file with its module name, so that imports can be
 * resolved and functions extracted. Built once per analysis and shared by all functions.
 */
import { extractFunctions, splitLines, type ExtractedFunction } from './extract';
import { readPythonFiles } from './files';
import { parsePython, type Tree } from './parser';
import type { AnalysisOptions, SkippedFile } from './types';

export interface ModuleInfo {
  /** File path relative to the root, '/' separators. */
  path: string;
  /** Path without `.py` (and without `/__init__` for a package): the key imports resolve to. */
  key: string;
  isPackage: boolean;
  text: string;
  lines: string[];
  tree: Tree;
}

/** A parser failure on one file is a skip like a syntax error, never the end of the analysis. */
function safeParse(text: string): ReturnType<typeof parsePython> {
  try {
    return parsePython(text);
  } catch (err) {
    return { ok: false, reason: `parser failure: ${(err as Error).message}` };
  }
}

export class Repository {
  readonly modules = new Map<string, ModuleInfo>();
  /** Module key -> module. */
  readonly byKey = new Map<string, ModuleInfo>();
  /** Directories that exist in the tree (namespace packages resolve to them). */
  readonly dirs = new Set<string>();
  /** Last path component chain index for suffix lookups: 'b/c' -> keys ending with it. */
  private suffixIndex: Map<string, string[]> | null = null;
  private functionsCache: ExtractedFunction[] | null = null;

  private constructor(
    readonly root: string,
    readonly skipped: SkippedFile[],
  ) {}

  static async load(rootDir: string, options: AnalysisOptions): Promise<Repository> {
    const { files, skipped } = await readPythonFiles(rootDir, options);
    const repo = new Repository(rootDir, skipped);
    for (const file of files) {
      const parsed = safeParse(file.text);
      if (!parsed.ok) {
        skipped.push({ path: file.path, reason: parsed.reason });
        continue;
      }
      repo.add(file.path, file.text, parsed.tree);
    }
    skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return repo;
  }

  /** Builds a repository from in-memory sources (tests, benchmarks). */
  static fromSources(sources: Record<string, string>): Repository {
    const repo = new Repository('.', []);
    for (const [path, text] of Object.entries(sources).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const parsed = safeParse(text);
      if (parsed.ok) repo.add(path, text, parsed.tree);
      else repo.skipped.push({ path, reason: parsed.reason });
    }
    return repo;
  }

  private add(path: string, text: string, tree: Tree): void {
    const isPackage = path === '__init__.py' || path.endsWith('/__init__.py');
    const key = isPackage ? path.slice(0, -'__init__.py'.length).replace(/\/$/, '') : path.slice(0, -3);
    const info: ModuleInfo = { path, key, isPackage, text, lines: splitLines(text), tree };
    this.modules.set(path, info);
    // A package wins over a same-named module only if the module is absent (Python prefers the package).
    if (!this.byKey.has(key) || isPackage) this.byKey.set(key, info);
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) this.dirs.add(parts.slice(0, i).join('/'));
  }

  functions(): ExtractedFunction[] {
    if (!this.functionsCache) {
      this.functionsCache = [];
      for (const m of this.modules.values()) this.functionsCache.push(...extractFunctions(m.path, m.tree, m.text, m.lines));
    }
    return this.functionsCache;
  }

  /** Keys whose trailing components equal `suffix` ('pkg/mod'), shortest path first. */
  keysEndingWith(suffix: string): string[] {
    if (!this.suffixIndex) {
      this.suffixIndex = new Map();
      for (const key of this.byKey.keys()) {
        const parts = key.split('/');
        for (let i = 0; i < parts.length; i++) {
          const s = parts.slice(i).join('/');
          let list = this.suffixIndex.get(s);
          if (!list) this.suffixIndex.set(s, (list = []));
          list.push(key);
        }
      }
      for (const list of this.suffixIndex.values()) list.sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
    }
    return this.suffixIndex.get(suffix) ?? [];
  }
}
