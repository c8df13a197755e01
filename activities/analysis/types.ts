/**
 * Public shapes of the static analysis: what a repository yields (functions, skips) and what
 * one function needs (its local dependencies and the context text built from them).
 */
import { z } from 'zod';
import { ANALYSIS_PRESETS } from './presets';

export type FunctionKind = 'function' | 'method';
export type DefinitionKind = 'function' | 'class' | 'method' | 'variable';

/** One module-level function or one method (of a class at any nesting depth). */
export interface FunctionEntry {
  /** Relative to the repository root, '/' separators. */
  path: string;
  /** Python's qualified name without `<locals>`: 'func', 'Class.method', 'Outer.Inner.m'. */
  qualname: string;
  name: string;
  kind: FunctionKind;
  /** 1-based, inclusive; decorators are part of the span. */
  startLine: number;
  endLine: number;
  /** `def name(params) -> ret:` as written (async included), on one line. */
  signature: string;
  docstring: string | null;
  /** Decorator expressions without the '@'. */
  decorators: string[];
  /** Whether the body (not counting nested functions) has a `return <value>`. */
  returns: boolean;
  /** The exact text of the span's lines, indentation kept. */
  source: string;
  kept: boolean;
  /** Name of the candidate-filter rule that dropped it, null when kept. */
  droppedBy: string | null;
  /** Deterministic id: see functionId(). */
  id: string;
  /** 0 for the definition Python binds; 1, 2, ... for earlier definitions of the same name in the file. */
  occurrence: number;
  /** Set by the `repost` preset: sampled before the others (it passes with its docstring, as RepoST prefers). */
  sampledFirst?: boolean;
}

export interface DependencyEntry {
  path: string;
  qualname: string;
  kind: DefinitionKind;
  startLine: number;
  endLine: number;
  /** Hops from the target in the reference graph: 1 = referenced directly by the target. */
  distance: number;
}

export interface FunctionAnalysis extends FunctionEntry {
  /** No local dependency at all (RepoST counts ~27% of GitHub functions as standalone). */
  standalone: boolean;
  /** Local definitions the target needs, nearest first. */
  dependencies: DependencyEntry[];
  /** What could not be resolved: unbound names, star imports, dynamic imports, getattr. */
  unresolved: string[];
  /** `## path` blocks grouped by file in dependency order, the target's file last. */
  context: string;
  /** The same context per file, for other layouts (formatContext(blocks, { fenced: true }) gives RepoST's). */
  contextBlocks: { path: string; code: string }[];
  /** Definitions left out of the context, farthest first: for the token budget, or beyond the closure depth. */
  truncated: LeftOut[];
  /** Estimated tokens of `context`. */
  contextTokens: number;
  /** Names the context's code looks up at run time (getattr with a computed name, globals()[...], importlib, handler tables), where, and what they can reach. */
  dynamic: DynamicLookup[];
  /**
   * Names the context's code uses that the context does not supply: local definitions it left
   * out (budget, depth, or never reached) as `path::qualname`, and names that resolve nowhere.
   * Builtins and library imports are not listed.
   */
  unsupplied: string[];
}

/** A name looked up at run time (closure.ts), where it is, and what it can reach. */
export interface DynamicLookup {
  kind: 'getattr' | 'globals' | 'import' | 'table';
  path: string;
  /** 1-based line of the lookup. */
  line: number;
  /** The lookup's code on one line, clipped. */
  code: string;
  /** What the looked-up name starts with when the code shows it ('' when it does not). */
  prefix: string;
  /** Qualified names of the local definitions the lookup can reach (by prefix, or a table's values). */
  reaches: string[];
}

/** A definition left out of a context, and why. */
export interface LeftOut {
  path: string;
  qualname: string;
  reason: 'budget' | 'depth';
}

/** What a class environment needs of one class: its source, and its local dependencies and context. */
export interface ClassAnalysis {
  path: string;
  /** A top-level class's name (class environments copy top-level classes). */
  qualname: string;
  name: string;
  startLine: number;
  endLine: number;
  /** The class's lines as written. */
  source: string;
  /** Class and method signatures with their docstrings, bodies replaced by `pass` (OpenClassGen's skeleton). */
  skeleton: string;
  documentation: 'full' | 'partial' | 'none';
  /** Its methods (those of nested classes as `Inner.method`), in source order. */
  methods: string[];
  /** No local dependency outside the class. */
  standalone: boolean;
  dependencies: DependencyEntry[];
  unresolved: string[];
  /** `## path` blocks: the dependencies, then the class's own file with the whole class. */
  context: string;
  contextBlocks: { path: string; code: string }[];
  truncated: LeftOut[];
  contextTokens: number;
  dynamic: DynamicLookup[];
  unsupplied: string[];
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface RepoAnalysis {
  functions: FunctionEntry[];
  skipped: SkippedFile[];
}

/** The candidate filters of RepoST/R2E, each a named rule that can be switched off. */
export const FilterRulesSchema = z.object({
  requireDocstring: z.boolean().default(false),
  requireArguments: z.boolean().default(true),
  requireReturn: z.boolean().default(true),
  noTrivialLiteral: z.boolean().default(true),
  /** Drop a function whose only effect is output the tests may not compare (prints, logs, warnings; output-only.ts), under either preset. */
  noOutputOnly: z.boolean().default(true),
  sizeLimits: z.boolean().default(true),
  noDunder: z.boolean().default(true),
  noTestCode: z.boolean().default(true),
  noShadowed: z.boolean().default(true),
  keywords: z.boolean().default(true),
});
export type FilterRules = z.infer<typeof FilterRulesSchema>;

/** The class filters (class-selection.ts), each a named rule that can be switched off. */
export const ClassRulesSchema = z.object({
  noShadowed: z.boolean().default(true),
  noTestClasses: z.boolean().default(true),
  noAbstractOnly: z.boolean().default(true),
  /** Drop a class whose methods' only effect is output the tests may not compare (an event handler that prints or logs; output-only.ts). */
  noOutputOnly: z.boolean().default(true),
  methodCount: z.boolean().default(true),
  sizeLimits: z.boolean().default(true),
  keywords: z.boolean().default(true),
});
export type ClassRules = z.infer<typeof ClassRulesSchema>;

export const AnalysisOptionsSchema = z.object({
  /** Identifies the repository in function ids ('owner/name' or a folder name). */
  repoId: z.string().min(1).optional(),
  /** Pinned commit used in function ids; 'local' for a working folder. */
  commit: z.string().min(1).default('local'),
  /** The candidate filters (RepoST's and R2E's), each a switch: `requireDocstring` (off by default), `requireArguments`, `requireReturn`, `noTrivialLiteral`, `noOutputOnly`, `sizeLimits`, `noDunder`, `noTestCode`, `noShadowed`, `keywords`. */
  rules: FilterRulesSchema.prefault({}),
  /**
   * Which selection applies: `default` (the rules above) or `repost` (RepoST's published rules,
   * line limits and per-repository sampling, `presets.ts`; `rules`, `minLines` and `maxLines` then
   * play no part).
   */
  preset: z.enum(ANALYSIS_PRESETS).default('default'),
  /** The split of the repository, for the rules that differ by split (the `repost` preset's). */
  split: z.enum(['train', 'eval']).default('train'),
  /** Size limits (lines of the function span) of the sizeLimits rule. */
  minLines: z.number().int().positive().default(3),
  /** The longest function span the sizeLimits rule keeps, in lines. */
  maxLines: z.number().int().positive().default(200),
  /** The class filters, and the limits of their `methods` and `size` rules (methods in the class body; lines of the class). */
  classRules: ClassRulesSchema.prefault({}),
  /** The fewest methods a class may have (the class `methods` rule). */
  minClassMethods: z.number().int().positive().default(3),
  /** The most methods a class may have (the class `methods` rule). */
  maxClassMethods: z.number().int().positive().default(20),
  /** The fewest lines a class may have (the class `size` rule). */
  minClassLines: z.number().int().positive().default(8),
  /** The most lines a class may have (the class `size` rule). */
  maxClassLines: z.number().int().positive().default(150),
  /** Extra keywords appended to the built-in keyword filters (of functions and of classes). */
  extraKeywords: z.array(z.string().min(1)).default([]),
  /** Token budget of the context text; 0 = unlimited. */
  contextTokenBudget: z.number().int().nonnegative().default(8000),
  /**
   * The context closure: besides what the code needs to run, the local definitions its
   * annotations (string ones included), type-alias strings and dynamic lookups name. Off: only
   * what runs (the closure before it existed, for comparisons).
   */
  contextClosure: z.boolean().default(true),
  /** The farthest distance from the target the closure follows (0 = no limit); what lies beyond is listed as left out for depth. */
  closureDepth: z.number().int().nonnegative().default(6),
  /**
   * Whether the context shows a repeated definition once (one inside a shown statement or import
   * block, or the same text in two files). Off only to measure what it saves (`npm run bench -- context`);
   * not a setting of the configuration.
   */
  contextDedupe: z.boolean().default(true),
  /** Whether the target's own code is part of the context (RepoST's context includes it). */
  contextIncludesTarget: z.boolean().default(true),
  maxFunctionsPerRepo: z.number().int().positive().default(30),
  seed: z.number().int().default(0),
  /** Files larger than this are skipped (generated code, data dumps). */
  maxFileBytes: z.number().int().positive().default(1024 * 1024),
  /** Directories never entered. */
  ignoreDirs: z.array(z.string()).default(['.git', '.hg', '.svn', 'node_modules', '__pycache__', '.tox', '.nox', '.venv', 'venv', 'env', 'site-packages', '.eggs', 'build', 'dist']),
});
export type AnalysisOptions = z.infer<typeof AnalysisOptionsSchema>;

export function resolveOptions(options: Partial<z.input<typeof AnalysisOptionsSchema>> | undefined): AnalysisOptions {
  return AnalysisOptionsSchema.parse(options ?? {});
}
