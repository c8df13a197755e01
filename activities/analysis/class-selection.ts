/**
 * Which classes become class environments: the class filters, each a named rule like the function
 * filters (filters.ts), applied in a fixed order so that the first rule that drops a class is
 * recorded as its `droppedBy` and every dropped class is counted once, by that rule.
 *
 *   shadowed       an earlier class of the same name in the file (Python binds the last one)
 *   nested         defined inside another class: a class environment copies a top-level class
 *   test-class     a test class: OpenClassGen's rule (a name starting or ending with `Test` or
 *                  `Case`, a path word `test`, `tests` or `unit`) or the function filter's (a test
 *                  file, a `unittest` TestCase)
 *   abstract-only  every method is abstract or does nothing a test could observe (`pass`, `...`,
 *                  a literal return, `raise NotImplementedError`): nothing to compare
 *   output-only    every method but the constructor has output as its only effect (prints, logs,
 *                  warnings; output-only.ts): no test may compare it, so nothing to compare
 *   methods        fewer than `minClassMethods` or more than `maxClassMethods` methods
 *   size           fewer than `minClassLines` or more than `maxClassLines` lines (the whole class
 *                  and its tests must fit in one answer)
 *   keywords       the class's code names what a sandbox cannot give it (the function filter's
 *                  keyword groups and `extraKeywords`: GPUs, cloud services, plotting, processes,
 *                  event loops, command lines, GUIs)
 *
 * `nested` always applies; every other rule can be switched off (`analysis.classRules.*`).
 */
import { createHash } from 'node:crypto';
import { isOpenClassGenTestClass, type ClassInfo } from './classes';
import { isTestClassName, isTestPath, KEYWORD_GROUPS } from './filters';
import { isOutputOnlyClass } from './output-only';
import type { AnalysisOptions } from './types';

export const CLASS_RULES = ['shadowed', 'nested', 'test-class', 'abstract-only', 'output-only', 'methods', 'size', 'keywords'] as const;
export type ClassRule = (typeof CLASS_RULES)[number];

/** One class with the rule that drops it (null: kept). */
export interface ClassCandidate {
  info: ClassInfo;
  /** Deterministic class id (see classId in activities/classes). */
  id: string;
  /** Its source as written (the class's own lines, first-line indentation removed). */
  source: string;
  kept: boolean;
  droppedBy: ClassRule | null;
}

/** What the rules need to know of a class beyond its ClassInfo. */
export interface ClassFacts {
  source: string;
  /** Per method: abstract (`@abstractmethod`) or a body that does nothing a test could observe. */
  methodIsAbstract: boolean[];
  /** Per method: its only effect is output the tests may not compare (output-only.ts); absent: not known. */
  methodIsOutputOnly?: boolean[];
}

/** The first class rule that drops the class, or null. */
export function classDroppedBy(c: ClassInfo, facts: ClassFacts, options: AnalysisOptions): ClassRule | null {
  const r = options.classRules;
  if (r.noShadowed && c.occurrence > 0) return 'shadowed';
  if (c.qualname.includes('.')) return 'nested';
  if (r.noTestClasses && (isOpenClassGenTestClass(c.path, c.name) || isTestPath(c.path) || isTestClassName(c.name, c.bases))) return 'test-class';
  if (r.noAbstractOnly && facts.methodIsAbstract.every(Boolean)) return 'abstract-only';
  if (r.noOutputOnly && facts.methodIsOutputOnly && isOutputOnlyClass(c.methods.map((m) => m.name), facts.methodIsOutputOnly)) return 'output-only';
  if (r.methodCount && (c.methods.length < options.minClassMethods || c.methods.length > options.maxClassMethods)) return 'methods';
  if (r.sizeLimits) {
    const lines = c.endLine - c.startLine + 1;
    if (lines < options.minClassLines || lines > options.maxClassLines) return 'size';
  }
  if (r.keywords) {
    for (const re of Object.values(KEYWORD_GROUPS)) if (re.test(facts.source)) return 'keywords';
    for (const kw of options.extraKeywords) if (facts.source.includes(kw)) return 'keywords';
  }
  return null;
}

/** Classes dropped per rule (every rule present, zero or not), and the classes kept. */
export function classSelectionCounts(candidates: readonly ClassCandidate[]): { found: number; kept: number; droppedBy: Record<ClassRule, number> } {
  const droppedBy = Object.fromEntries(CLASS_RULES.map((r) => [r, 0])) as Record<ClassRule, number>;
  for (const c of candidates) if (c.droppedBy) droppedBy[c.droppedBy] += 1;
  return { found: candidates.length, kept: candidates.filter((c) => c.kept).length, droppedBy };
}

/**
 * At most `max` kept classes, chosen by a seeded hash of their ids (as the functions are: stable
 * under reordering, independent of how many others exist), in file and line order.
 */
export function selectClassCandidates(candidates: readonly ClassCandidate[], max: number, seed: number): ClassCandidate[] {
  const kept = candidates.filter((c) => c.kept);
  if (kept.length <= max) return kept;
  const rank = (c: ClassCandidate) => createHash('sha256').update(`${seed}:${c.id}`).digest('hex');
  const chosen = new Set(
    kept
      .map((c) => ({ c, r: rank(c) }))
      .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
      .slice(0, max)
      .map((x) => x.c),
  );
  return kept.filter((c) => chosen.has(c));
}
