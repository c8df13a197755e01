/**
 * The class environments of a run, summarised apart from its functions (`summary.json`'s
 * `classes`): which classes the class filters kept (per rule, from the repositories' listings),
 * the funnel of the pipeline's stages, the split of each end, and per split the figures of the
 * accepted class environments (methods, lines, test functions, coverage over the methods, the
 * documentation levels). Built one record at a time, like the function summary.
 */
import type { FunctionStage } from '../contracts';
import type { ClassDatasetRecord } from '../store/records';
import type { RepoProgress } from '../store/types';
import { FunnelCounter } from './records';

export interface ClassSelectionCounts {
  /** Classes found in the repositories, test classes included. */
  found: number;
  /** Classes dropped per class filter (the first rule that dropped each). */
  droppedBy: Record<string, number>;
  /** Classes the filters kept. */
  kept: number;
  /** Classes sampled (at most the per-repository cap): the class environments the run tried. */
  sampled: number;
}

export interface ClassSplitStatistics {
  repositories: number;
  classes: number;
  avgMethods: number | null;
  avgClassLines: number | null;
  avgEvalScriptLines: number | null;
  avgTestFunctions: number | null;
  /** Mean coverage over the methods (branch where they branch, else line). */
  avgCoverage: number | null;
  /** Mean share of methods whose own coverage is complete. */
  avgMethodsFullyCovered: number | null;
  documentation: Record<'full' | 'partial' | 'none', number>;
}

export interface ClassRunSummary {
  selection: ClassSelectionCounts;
  classes: number;
  accepted: number;
  rejected: number;
  /** Classes that reached each stage; `rejectedAt` per stage plus `accepted` add up to `classes`. */
  funnel: Record<string, number>;
  rejectedAt: Record<string, number>;
  bySplit: Record<string, { accepted: number; rejected: number }>;
  statistics: Partial<Record<'train' | 'eval', ClassSplitStatistics>>;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const lines = (text: string) => text.replace(/\n+$/, '').split('\n').length;

class ClassSplitAccumulator {
  private readonly repos = new Set<string>();
  private n = 0;
  private sums = { methods: 0, classLines: 0, scriptLines: 0, tests: 0, coverage: 0, coverageN: 0, fullMethods: 0, fullN: 0 };
  private readonly documentation = { full: 0, partial: 0, none: 0 };

  add(r: ClassDatasetRecord): void {
    this.n += 1;
    this.repos.add(r.repo_name);
    const s = this.sums;
    s.methods += r.methods.length;
    s.classLines += lines(r.orig_class);
    s.scriptLines += lines(r.eval_script);
    s.tests += r.test_functions.length;
    if (r.coverage_rate !== null) {
      s.coverage += r.coverage_rate;
      s.coverageN += 1;
    }
    if (r.method_coverage.length) {
      s.fullMethods += r.method_coverage.filter((m) => m.rate >= 1).length / r.method_coverage.length;
      s.fullN += 1;
    }
    this.documentation[r.documentation_level] += 1;
  }

  result(): ClassSplitStatistics {
    const s = this.sums;
    const mean = (sum: number, n: number) => (n > 0 ? round3(sum / n) : null);
    return {
      repositories: this.repos.size,
      classes: this.n,
      avgMethods: mean(s.methods, this.n),
      avgClassLines: mean(s.classLines, this.n),
      avgEvalScriptLines: mean(s.scriptLines, this.n),
      avgTestFunctions: mean(s.tests, this.n),
      avgCoverage: mean(s.coverage, s.coverageN),
      avgMethodsFullyCovered: mean(s.fullMethods, s.fullN),
      documentation: { ...this.documentation },
    };
  }
}

/** The class part of a run's summary, one record at a time. */
export class ClassSummaryBuilder {
  private readonly funnel = new FunnelCounter();
  private readonly bySplit: Record<string, { accepted: number; rejected: number }> = {};
  private readonly splits = new Map<'train' | 'eval', ClassSplitAccumulator>();
  private accepted = 0;
  private rejected = 0;
  private readonly selection: ClassSelectionCounts = { found: 0, droppedBy: {}, kept: 0, sampled: 0 };

  /** A repository's class listing (its progress holds the counts of its class filters). */
  addRepository(progress: Pick<RepoProgress, 'classSelection'>): void {
    const c = progress.classSelection;
    if (!c) return;
    const s = this.selection;
    s.found += c.found;
    s.kept += c.kept;
    s.sampled += c.sampled;
    for (const [rule, n] of Object.entries(c.droppedBy)) s.droppedBy[rule] = (s.droppedBy[rule] ?? 0) + n;
  }

  addAccepted(r: ClassDatasetRecord): void {
    this.accepted += 1;
    this.funnel.add('accepted');
    (this.bySplit[r.split] ??= { accepted: 0, rejected: 0 }).accepted += 1;
    let acc = this.splits.get(r.split);
    if (!acc) this.splits.set(r.split, (acc = new ClassSplitAccumulator()));
    acc.add(r);
  }

  addRejected(split: string, stage: FunctionStage): void {
    this.rejected += 1;
    this.funnel.add(stage);
    (this.bySplit[split] ??= { accepted: 0, rejected: 0 }).rejected += 1;
  }

  /** Whether the run made class environments at all (else its summary has no class part). */
  get any(): boolean {
    return this.selection.found > 0 || this.accepted + this.rejected > 0;
  }

  result(): ClassRunSummary {
    const { reached, rejectedAt } = this.funnel.result();
    return {
      selection: { ...this.selection, droppedBy: { ...this.selection.droppedBy } },
      classes: this.accepted + this.rejected,
      accepted: this.accepted,
      rejected: this.rejected,
      funnel: reached,
      rejectedAt,
      bySplit: this.bySplit,
      statistics: Object.fromEntries([...this.splits].sort(([a], [b]) => a.localeCompare(b)).map(([split, acc]) => [split, acc.result()])),
    };
  }
}
