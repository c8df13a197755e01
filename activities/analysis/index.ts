/**
 * Static analysis of a Python repository: the candidate functions (with the filter rule that
 * dropped each one) and, per function, its local dependencies and the context text the sandbox
 * prompt needs. Plain TypeScript; the activities wrap it.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { classDroppedBy, type ClassCandidate } from './class-selection';
import { classesOf, classSource, type ClassInfo } from './classes';
import { definitionTokens, estimateTokens, formatContext, renderContextBlocks, type ContextBlock } from './context';
import { contextReferencesOf } from './closure';
import { classDependencyClosure, dependencyClosure, type ClosureOptions, type DependencyClosure } from './dependencies';
import { referencesOf } from './references';
import type { ExtractedFunction } from './extract';
import { firstFailingRule, hasOnlyOutput, outputOnlyRule } from './filters';
import { REPOST_SELECTION, type AnalysisPreset } from './presets';
import { repostVerdict } from './repost-rules';
import type { SyntaxNode } from './parser';
import { Repository, type ModuleInfo } from './repository';
import { Resolver, type Definition } from './resolver';
import {
  AnalysisOptionsSchema,
  resolveOptions,
  type AnalysisOptions,
  type ClassAnalysis,
  type DependencyEntry,
  type FunctionAnalysis,
  type FunctionEntry,
  type DynamicLookup,
  type LeftOut,
  type RepoAnalysis,
} from './types';
import type { z } from 'zod';

export * from './types';
export { estimateTokens, formatContext, type ContextBlock } from './context';
export { classesOf, classSource, isOpenClassGenTestClass, pathWords, type ClassInfo, type ClassMetrics } from './classes';
export { CLASS_RULES, classDroppedBy, classSelectionCounts, selectClassCandidates, type ClassCandidate, type ClassRule } from './class-selection';
export { cyclomaticComplexity, methodMetrics, cohesion, type MethodMetrics } from './class-metrics';
export { KEYWORD_GROUPS, isTestPath, isTestClassName } from './filters';
export { ANALYSIS_PRESETS, REPOST_MAX_PER_REPO, REPOST_SELECTION, presetConfigLayer, type AnalysisPreset } from './presets';

export type AnalysisOptionsInput = z.input<typeof AnalysisOptionsSchema>;

/**
 * Deterministic function id (docs/architecture.md, invariant 3): 16 hex chars of sha256 of repo, commit, path and
 * qualified name. A name defined several times in one file (shadowed definitions) gets one id per
 * definition: the last one, which Python binds, has occurrence 0, earlier ones 1, 2, ... counting back.
 */
export function functionId(repoId: string, commit: string, path: string, qualname: string, occurrence = 0): string {
  const suffix = occurrence > 0 ? `#${occurrence}` : '';
  return createHash('sha256').update(`${repoId}@${commit}:${path}::${qualname}${suffix}`).digest('hex').slice(0, 16);
}

/** Deterministic class id: like functionId, over `class:` and the same parts, so a class and a function never share one. */
export function classId(repoId: string, commit: string, path: string, qualname: string, occurrence = 0): string {
  const suffix = occurrence > 0 ? `#${occurrence}` : '';
  return createHash('sha256').update(`class:${repoId}@${commit}:${path}::${qualname}${suffix}`).digest('hex').slice(0, 16);
}

function repoIdOf(rootDir: string, options: AnalysisOptions): string {
  return options.repoId ?? path.basename(path.resolve(rootDir));
}

/** Parsed repositories kept by openCached() by default: each holds its trees in memory, so only a few. */
const ANALYZER_CACHE_SIZE = 3;
const analyzerCache = new Map<string, Promise<RepositoryAnalyzer>>();

/** A parsed repository kept in memory so that many functions can be analysed from one parse. */
export class RepositoryAnalyzer {
  private readonly resolver: Resolver;
  private entries: FunctionEntry[] | null = null;
  /** Every class, test classes included (computed once: the metrics walk the whole repository). */
  private allClasses: ClassInfo[] | null = null;
  private indexByName: Map<string, number> | null = null;

  private constructor(
    /** The parsed repository (modules, skipped files). */
    readonly repo: Repository,
    readonly options: AnalysisOptions,
    readonly repoId: string,
  ) {
    const rootNames = [path.basename(path.resolve(repo.root)), repoId.split('/').pop()!].filter((n) => /^[A-Za-z_]\w*$/.test(n));
    this.resolver = new Resolver(repo, rootNames);
  }

  static async open(rootDir: string, options?: AnalysisOptionsInput): Promise<RepositoryAnalyzer> {
    const opts = resolveOptions(options);
    return new RepositoryAnalyzer(await Repository.load(rootDir, opts), opts, repoIdOf(rootDir, opts));
  }

  /**
   * Like open(), but keeps the last `capacity` parsed repositories in memory: a snapshot directory
   * is immutable, so analysing its functions one after another needs one parse, not one per
   * function. A crawl sizes it from its repository window, so interleaved repositories stay parsed.
   * Do not use on a folder that changes.
   */
  static async openCached(rootDir: string, options?: AnalysisOptionsInput, capacity = ANALYZER_CACHE_SIZE): Promise<RepositoryAnalyzer> {
    const key = JSON.stringify([path.resolve(rootDir), options ?? {}]);
    let entry = analyzerCache.get(key);
    if (!entry) {
      entry = RepositoryAnalyzer.open(rootDir, options);
      analyzerCache.set(key, entry);
      entry.catch(() => analyzerCache.delete(key));
      while (analyzerCache.size > Math.max(1, capacity)) analyzerCache.delete(analyzerCache.keys().next().value!);
    } else {
      // Most recently used last.
      analyzerCache.delete(key);
      analyzerCache.set(key, entry);
    }
    return entry;
  }

  /** For tests and benchmarks: a repository given as a map of path -> source. */
  static fromSources(sources: Record<string, string>, options?: AnalysisOptionsInput): RepositoryAnalyzer {
    const opts = resolveOptions(options);
    return new RepositoryAnalyzer(Repository.fromSources(sources), opts, opts.repoId ?? 'memory');
  }

  get skipped() {
    return this.repo.skipped;
  }

  /** Every module-level function and method, kept or dropped, in file then line order. */
  functions(): FunctionEntry[] {
    if (this.entries) return this.entries;
    const all = this.repo.functions();
    // Of several definitions of one name in one file, only the last is reachable; each counts
    // how many later definitions of its name follow it (its occurrence, 0 for the last).
    const later = new Map<string, number>();
    const occurrence = new Array<number>(all.length);
    for (let i = all.length - 1; i >= 0; i--) {
      const key = `${all[i]!.path}::${all[i]!.qualname}`;
      occurrence[i] = later.get(key) ?? 0;
      later.set(key, occurrence[i]! + 1);
    }
    this.entries = all.map((f, i) => this.toEntry(f, occurrence[i]!));
    return this.entries;
  }

  private toEntry(f: ExtractedFunction, occurrence: number): FunctionEntry {
    const shadowed = occurrence > 0;
    // Of several definitions of one name, the one Python binds is the candidate under either preset.
    const repost = this.options.preset === 'repost' && !shadowed ? repostVerdict(f, this.options.split) : null;
    const selected = this.options.preset === 'repost' ? (shadowed ? 'shadowed' : repost!.droppedBy) : firstFailingRule(f, shadowed, this.options);
    // A kept function whose only effect is output no allowed test may compare is dropped here, before any LLM call.
    const droppedBy = selected ?? outputOnlyRule(f, this.options);
    return {
      path: f.path,
      qualname: f.qualname,
      name: f.name,
      kind: f.kind,
      startLine: f.startLine,
      endLine: f.endLine,
      signature: f.signature,
      docstring: f.docstring,
      decorators: f.decorators,
      returns: f.returns,
      source: f.source,
      kept: droppedBy === null,
      droppedBy,
      id: functionId(this.repoId, this.options.commit, f.path, f.qualname, occurrence),
      occurrence,
      ...(repost && droppedBy === null ? { sampledFirst: repost.withDocstring } : {}),
    };
  }

  private definitionOf(module: ModuleInfo, f: ExtractedFunction): Definition {
    // Owners come from the enclosing class nodes, so that a conditional or shadowed definition
    // still gets its own node.
    const classes: SyntaxNode[] = [];
    for (let p = f.node.parent; p; p = p.parent) if (p.type === 'class_definition') classes.unshift(p);
    let owner: Definition | null = null;
    const names: string[] = [];
    for (const c of classes) {
      names.push(c.childForFieldName('name')!.text);
      owner = this.resolver.definition(module, names.join('.'), 'class', c, owner);
    }
    return this.resolver.definition(module, f.qualname, f.kind, f.node, owner);
  }

  /** The kept functions to process: sampled by options.seed, as many as the preset allows (see chooseCandidates). */
  candidates(): FunctionEntry[] {
    return chooseCandidates(this.functions(), { preset: this.options.preset, split: this.options.split, max: this.options.maxFunctionsPerRepo, seed: this.options.seed });
  }

  /** Every class (nested included, test classes excluded) with its skeleton and metrics. */
  classes(): ClassInfo[] {
    return classesOf(this.repo, this.resolver);
  }

  private everyClass(): ClassInfo[] {
    this.allClasses ??= classesOf(this.repo, this.resolver, { includeTestClasses: true });
    return this.allClasses;
  }

  /**
   * Every class with the class filter that drops it (class-selection.ts): test classes included,
   * so the `test-class` rule is counted like the others.
   */
  classCandidates(): ClassCandidate[] {
    const byName = new Map(this.repo.functions().map((f) => [`${f.path}::${f.qualname}`, f]));
    return this.everyClass().map((info) => {
      const source = classSource(this.repo.modules.get(info.path)!.lines, info.startLine, info.endLine);
      const methodIsAbstract = info.methods.map((m) => {
        const f = byName.get(`${info.path}::${info.qualname}.${m.name}`);
        return !f || f.trivialBody || f.decorators.some((d) => /(^|\.)abstract\w*$/.test(d));
      });
      const methodIsOutputOnly = info.methods.map((m) => {
        const f = byName.get(`${info.path}::${info.qualname}.${m.name}`);
        return this.options.classRules.noOutputOnly && f !== undefined && hasOnlyOutput(f);
      });
      const droppedBy = classDroppedBy(info, { source, methodIsAbstract, methodIsOutputOnly }, this.options);
      return { info, id: classId(this.repoId, this.options.commit, info.path, info.qualname, info.occurrence), source, kept: droppedBy === null, droppedBy };
    });
  }

  /**
   * What a class environment needs of a top-level class: its source, skeleton and methods, and
   * the context of the whole class (what any of its methods needs, then its own file with the
   * whole class in it), within the token budget like a function's.
   */
  analyzeClass(path: string, qualname: string, occurrence = 0): ClassAnalysis {
    const module = this.repo.modules.get(path);
    if (!module) {
      const skip = this.repo.skipped.find((s) => s.path === path);
      throw new Error(skip ? `${path} was skipped: ${skip.reason}` : `no file ${path}`);
    }
    if (qualname.includes('.')) throw new Error(`${qualname} is a nested class: class environments copy top-level classes`);
    if (occurrence > 0) throw new Error(`${qualname} in ${path} is shadowed by a later class of its name: only the one Python binds is analysed`);
    const info = this.everyClass().find((c) => c.path === path && c.qualname === qualname && c.occurrence === 0);
    const node = [...module.tree.rootNode.namedChildren]
      .map((n) => (n.type === 'decorated_definition' ? n.childForFieldName('definition') : n))
      .reverse()
      .find((n) => n?.type === 'class_definition' && n.childForFieldName('name')?.text === qualname);
    if (!info || !node) throw new Error(`no class ${qualname} in ${path}`);
    const target = this.resolver.definition(module, qualname, 'class', node, null);
    const closure = classDependencyClosure(this.resolver, target, this.closureOptions());
    const dependencies: DependencyEntry[] = closure.defs.map((d) => ({ path: d.module.path, qualname: d.qualname, kind: d.kind, startLine: d.startLine, endLine: d.endLine, distance: closure.distance.get(d)! }));
    const render = (defs: Definition[]) => formatContext(this.renderClassBlocks(target, closure, defs));
    const { kept, truncated } = this.fitBudget(closure.defs, budgetDistance(closure), render, closure.contextOnly, closure.contextOnly.size ? new Map([...closure.runtimeDistance.keys()].map((d, i) => [d, i])) : null);
    const contextBlocks = this.renderClassBlocks(target, closure, kept);
    const context = formatContext(contextBlocks);
    const shown = [target, ...closure.parts, ...kept];
    return {
      path,
      qualname,
      name: info.name,
      startLine: info.startLine,
      endLine: info.endLine,
      source: classSource(module.lines, info.startLine, info.endLine),
      skeleton: info.skeleton,
      documentation: info.documentation,
      methods: closure.parts.filter((p) => p.kind === 'method').map((p) => p.qualname.slice(qualname.length + 1)),
      standalone: dependencies.length === 0,
      dependencies,
      unresolved: closure.unresolved,
      context,
      contextBlocks,
      truncated: [...truncated, ...leftForDepth(closure)],
      contextTokens: estimateTokens(context),
      dynamic: closure.dynamic,
      unsupplied: this.unsupplied(shown, closure.dynamic),
    };
  }

  private closureOptions(): ClosureOptions {
    return { context: this.options.contextClosure, depth: this.options.closureDepth };
  }

  /**
   * What the code of `shown` (the definitions the context holds) uses and the context does not
   * supply: local definitions outside it, and names that resolve nowhere. Annotations and
   * dynamic lookups count whether or not the closure followed them.
   */
  private unsupplied(shown: Definition[], dynamic: DynamicLookup[]): string[] {
    const inContext = new Set(shown);
    const out = new Set<string>();
    for (const d of shown) {
      const runtime = referencesOf(this.resolver, d);
      const more = contextReferencesOf(this.resolver, d);
      for (const n of [...runtime.defs, ...more.defs]) if (!inContext.has(n)) out.add(`${n.module.path}::${n.qualname}`);
      for (const u of [...runtime.unresolved, ...more.unresolved]) if (/^[A-Za-z_][\w.]*$/.test(u)) out.add(u);
    }
    // A lookup whose name the code does not show can reach anything: the context cannot promise it.
    for (const d of dynamic) if (d.reaches.length === 0 && d.kind !== 'import') out.add(`${d.code} (dynamic, ${d.path}:${d.line})`);
    return [...out]
      .sort()
      .slice(0, MAX_UNSUPPLIED)
      .map((n) => (n.length > MAX_NAME ? `${n.slice(0, MAX_NAME - 3)}...` : n));
  }

  /** Context blocks of a class: its dependencies `defs`, and the whole class (every part of it). */
  private renderClassBlocks(target: Definition, closure: DependencyClosure & { parts: Definition[] }, defs: Definition[]): ContextBlock[] {
    return renderContextBlocks({ resolver: this.resolver, target, defs: [...closure.parts, ...defs], edges: closure.edges, includeTarget: true, dedupe: this.options.contextDedupe });
  }

  /**
   * The dependencies that fit the token budget. Whole distance levels are kept nearest first
   * (the direct ones always); the first level that does not fit is cut and everything farther
   * goes, so what is left out is always the farthest. Costs are estimated per definition, then
   * the rendered text is checked and trimmed further if imports pushed it over.
   */
  private fitBudget(found: Definition[], distance: Map<Definition, number>, render: (defs: Definition[]) => string, contextOnly: Set<Definition> = new Set(), order: Map<Definition, number> | null = null): { kept: Definition[]; truncated: LeftOut[] } {
    const budget = this.options.contextTokenBudget;
    if (budget === 0) return { kept: found, truncated: [] };
    // What runs needs is fitted first, then what only the context closure adds (a type an
    // annotation names, a handler a lookup can reach) in what is left: it never pushes out code
    // the target needs to run. Each part nearest first, levels cut whole from the farthest.
    const byDistance = (list: Definition[]) => list.sort((a, b) => distance.get(a)! - distance.get(b)!);
    // Within a level, what runs needs keeps the order its own closure found it in (the order a
    // runtime-only closure fits by), so that adding the context's part changes nothing of it.
    const found$ = order ? [...found].sort((a, b) => (order.get(a) ?? Infinity) - (order.get(b) ?? Infinity)) : found;
    const runtime = byDistance(found$.filter((d) => !contextOnly.has(d)));
    const extra = byDistance(found.filter((d) => contextOnly.has(d)));
    const defs = [...runtime, ...extra];
    // The direct dependencies the target runs with always stay.
    const fixed = (d: Definition) => distance.get(d)! <= 1 && !contextOnly.has(d);
    let used = estimateTokens(render([]));
    const kept: Definition[] = [];
    for (const part of [runtime, extra]) {
      let cutAt = Infinity;
      for (const d of part) {
        const dist = distance.get(d)!;
        const cost = definitionTokens(d);
        if (fixed(d) || (dist < cutAt && used + cost <= budget)) {
          kept.push(d);
          used += cost;
        } else if (dist < cutAt) cutAt = dist;
      }
    }
    let context = render(kept);
    while (estimateTokens(context) > budget) {
      // Imports and class shells are not in the estimates: drop more, the context-only part and the farthest first.
      let excess = estimateTokens(context) - budget;
      let dropped = false;
      let extraDropped = false;
      for (let i = kept.length - 1; i >= 0 && excess > 0; i--) {
        if (fixed(kept[i]!)) break;
        // Once the context-only part is gone, measure again before cutting what runs needs.
        if (extraDropped && !contextOnly.has(kept[i]!)) break;
        extraDropped = contextOnly.has(kept[i]!);
        excess -= definitionTokens(kept[i]!);
        kept.splice(i, 1);
        dropped = true;
      }
      if (!dropped) break;
      context = render(kept);
    }
    const keptSet = new Set(kept);
    const truncated = defs
      .map((d, i) => ({ d, i }))
      .filter(({ d }) => !keptSet.has(d))
      .sort((a, b) => b.i - a.i)
      .map(({ d }) => ({ path: d.module.path, qualname: d.qualname, reason: 'budget' as const }));
    return { kept, truncated };
  }

  /**
   * Dependencies and context of one function, whether or not a filter drops it. `occurrence`
   * picks an earlier, shadowed definition of the name (0: the last one, which Python binds).
   */
  analyze(path: string, qualname: string, occurrence = 0): FunctionAnalysis {
    const entries = this.functions();
    const extracted = this.repo.functions();
    if (!this.indexByName) {
      this.indexByName = new Map();
      entries.forEach((f, i) => this.indexByName!.set(`${f.path}::${f.qualname}#${f.occurrence}`, i));
    }
    const index = this.indexByName.get(`${path}::${qualname}#${occurrence}`) ?? -1;
    if (index < 0) {
      const skip = this.repo.skipped.find((s) => s.path === path);
      throw new Error(skip ? `${path} was skipped: ${skip.reason}` : `no function ${qualname} in ${path}`);
    }
    const f = extracted[index]!;
    const module = this.repo.modules.get(path)!;
    const target = this.definitionOf(module, f);
    const closure = dependencyClosure(this.resolver, target, this.closureOptions());
    const dependencies: DependencyEntry[] = closure.defs.map((d) => ({
      path: d.module.path,
      qualname: d.qualname,
      kind: d.kind,
      startLine: d.startLine,
      endLine: d.endLine,
      distance: closure.distance.get(d)!,
    }));
    const renderBlocks = (defs: Definition[]) => renderContextBlocks({ resolver: this.resolver, target, defs, edges: closure.edges, includeTarget: this.options.contextIncludesTarget, dedupe: this.options.contextDedupe });
    // Rendering is deterministic: the blocks of the last rendering are kept, since the budget
    // fitting usually ends by rendering exactly the definitions it keeps.
    let last: { defs: Definition[]; blocks: ContextBlock[] } | null = null;
    const render = (defs: Definition[]) => {
      const blocks = renderBlocks(defs);
      last = { defs: [...defs], blocks };
      return formatContext(blocks);
    };
    const { kept, truncated } = this.fitBudget(closure.defs, budgetDistance(closure), render, closure.contextOnly, closure.contextOnly.size ? new Map([...closure.runtimeDistance.keys()].map((d, i) => [d, i])) : null);
    const previous = last as { defs: Definition[]; blocks: ContextBlock[] } | null;
    const contextBlocks = previous && previous.defs.length === kept.length && previous.defs.every((d, i) => d === kept[i]) ? previous.blocks : renderBlocks(kept);
    const context = formatContext(contextBlocks);
    return {
      ...entries[index]!,
      standalone: dependencies.length === 0,
      dependencies,
      unresolved: closure.unresolved,
      context,
      contextBlocks,
      truncated: [...truncated, ...leftForDepth(closure)],
      contextTokens: estimateTokens(context),
      dynamic: closure.dynamic,
      unsupplied: this.unsupplied(this.options.contextIncludesTarget ? [target, ...kept] : kept, closure.dynamic),
    };
  }
}

/** At most this many names in a record's `unsupplied` list, each at most MAX_NAME characters. */
const MAX_UNSUPPLIED = 100;
const MAX_NAME = 160;

/** For the budget: what runs needs at its distance along what runs, the rest at its own. */
function budgetDistance(closure: DependencyClosure): Map<Definition, number> {
  if (closure.contextOnly.size === 0) return closure.distance;
  return new Map(closure.defs.map((d) => [d, closure.contextOnly.has(d) ? closure.distance.get(d)! : closure.runtimeDistance.get(d) ?? closure.distance.get(d)!]));
}

/** What the closure did not follow for its depth limit, farthest last. */
function leftForDepth(closure: DependencyClosure): LeftOut[] {
  return closure.beyondDepth.map((d) => ({ path: d.module.path, qualname: d.qualname, reason: 'depth' as const }));
}

export async function analyzeRepository(rootDir: string, options?: AnalysisOptionsInput): Promise<RepoAnalysis> {
  const analyzer = await RepositoryAnalyzer.open(rootDir, options);
  return { functions: analyzer.functions(), skipped: analyzer.skipped };
}

export async function analyzeFunction(rootDir: string, path: string, qualname: string, options?: AnalysisOptionsInput): Promise<FunctionAnalysis> {
  const analyzer = await RepositoryAnalyzer.open(rootDir, options);
  return analyzer.analyze(path, qualname);
}

/**
 * The candidates of a repository under a preset. `default`: at most `max` kept functions
 * (selectCandidates). `repost`: as RepoST samples, per kind, at most 20 functions and 20 methods
 * (training split) or 15 and 15 (evaluation split), those with their docstring first; then at most
 * `max` of them (the preset's own cap holds the whole sample, so only a smaller cap the user set
 * changes it), again documented ones first. Seeded, returned in file and line order.
 */
export function chooseCandidates(functions: FunctionEntry[], options: { preset: AnalysisPreset; split: 'train' | 'eval'; max: number; seed: number }): FunctionEntry[] {
  if (options.preset !== 'repost') return selectCandidates(functions, options.max, options.seed);
  const documentedFirst = (kept: FunctionEntry[], k: number): FunctionEntry[] => {
    const first = selectCandidates(kept.filter((f) => f.sampledFirst), k, options.seed);
    return first.length < k ? [...first, ...selectCandidates(kept.filter((f) => !f.sampledFirst), k - first.length, options.seed)] : first;
  };
  const k = REPOST_SELECTION.perKind[options.split];
  const sample = (['function', 'method'] as const).flatMap((kind) => documentedFirst(functions.filter((f) => f.kept && f.kind === kind), k));
  const chosen = new Set(sample.length > options.max ? documentedFirst(sample, options.max) : sample);
  return functions.filter((f) => chosen.has(f));
}

/**
 * At most `max` kept functions, chosen by a seeded hash of their ids (stable under reordering
 * and independent of how many others exist), returned in file and line order.
 */
export function selectCandidates(functions: FunctionEntry[], max: number, seed: number): FunctionEntry[] {
  const kept = functions.filter((f) => f.kept);
  if (kept.length <= max) return kept;
  const rank = (f: FunctionEntry) => createHash('sha256').update(`${seed}:${f.id}`).digest('hex');
  const chosen = new Set(
    kept
      .map((f) => ({ f, r: rank(f) }))
      .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
      .slice(0, max)
      .map((x) => x.f),
  );
  return kept.filter((f) => chosen.has(f));
}
