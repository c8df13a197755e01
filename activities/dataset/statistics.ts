/**
 * RepoST's Table 4 for a run's accepted records, per split: repositories, functions, average
 * target and evaluation-script length (tokens and lines), test cases per script, average branch
 * coverage, the share of standalone functions and the number of distinct external libraries;
 * plus what an accepted example cost (the run's LLM tokens and dollars over its accepted records,
 * so the price of the rejected ones is included).
 *
 * Records stream through (`StatisticsBuilder.add`), so a large dataset is never held in memory.
 * What each figure measures on one record is defined in `record-measures.ts`.
 */
import type { Usage } from '../store/usage';
import { STATISTICS_TOKENIZER } from './bpe-tokens';
import { SPLITS, type DatasetSplit, type ProductRecord } from './product-record';
import { measureRecord, type RecordMeasures } from './record-measures';
import { TargetLengthCounter, type TargetLengths } from './target-lengths';

export interface SplitStatistics {
  /** Distinct source repositories with at least one accepted record. */
  repositories: number;
  functions: number;
  avgTargetTokens: number | null;
  avgTargetLines: number | null;
  avgEvalScriptTokens: number | null;
  avgEvalScriptLines: number | null;
  avgTestsPerScript: number | null;
  /** Mean branch coverage (0..1) of the records whose coverage is known. */
  avgBranchCoverage: number | null;
  /** Share (0..1) of functions without local dependencies, among those where it is known. */
  standaloneShare: number | null;
  /** Distinct external libraries imported by the evaluation scripts. */
  externalLibraries: number;
  /** Mean LLM tokens spent on the record's own function (its `llm_tokens`). */
  avgLlmTokensPerRecord: number | null;
}

export interface DatasetStatistics {
  tokenizer: typeof STATISTICS_TOKENIZER;
  /** Only the splits that have records. */
  splits: Partial<Record<DatasetSplit, SplitStatistics>>;
  all: SplitStatistics;
  /** Records importing each external library, most used first. */
  libraries: Record<string, number>;
  /** The whole run's LLM spend divided by its accepted records; null without usage or records. */
  perAcceptedExample: { calls: number; tokens: number; costUsd: number } | null;
  /** Target lines per bin and split, beside RepoST's published evaluation set and the paper's averages. */
  targetLines: TargetLengths;
}

type StatRecord = Pick<ProductRecord, 'repo_name' | 'orig_func' | 'eval_script' | 'coverage_rate' | 'standalone' | 'llm_tokens' | 'debug_rounds' | 'coverage_rounds'> & {
  split?: DatasetSplit;
};

/** Averages are kept to three decimals: enough for a table, readable in summary.json. */
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const mean = (sum: number, n: number) => (n > 0 ? round3(sum / n) : null);

class SplitAccumulator {
  private readonly repos = new Set<string>();
  private readonly libraries = new Map<string, number>();
  private n = 0;
  private targetTokens = 0;
  private targetLines = 0;
  private scriptTokens = 0;
  private scriptLines = 0;
  private tests = 0;
  private coverageSum = 0;
  private coverageKnown = 0;
  private standalone = 0;
  private standaloneKnown = 0;
  private llmTokens = 0;

  add(record: StatRecord, m: RecordMeasures): void {
    this.n++;
    this.repos.add(record.repo_name);
    this.targetTokens += m.target.tokens;
    this.targetLines += m.target.lines;
    this.scriptTokens += m.evalScript.tokens;
    this.scriptLines += m.evalScript.lines;
    this.tests += m.tests;
    if (record.coverage_rate !== null) {
      this.coverageSum += record.coverage_rate;
      this.coverageKnown++;
    }
    if (record.standalone !== null) {
      this.standalone += record.standalone ? 1 : 0;
      this.standaloneKnown++;
    }
    this.llmTokens += record.llm_tokens;
    for (const lib of m.externalLibraries) this.libraries.set(lib, (this.libraries.get(lib) ?? 0) + 1);
  }

  libraryCounts(): Map<string, number> {
    return this.libraries;
  }

  result(): SplitStatistics {
    return {
      repositories: this.repos.size,
      functions: this.n,
      avgTargetTokens: mean(this.targetTokens, this.n),
      avgTargetLines: mean(this.targetLines, this.n),
      avgEvalScriptTokens: mean(this.scriptTokens, this.n),
      avgEvalScriptLines: mean(this.scriptLines, this.n),
      avgTestsPerScript: mean(this.tests, this.n),
      avgBranchCoverage: mean(this.coverageSum, this.coverageKnown),
      standaloneShare: mean(this.standalone, this.standaloneKnown),
      externalLibraries: this.libraries.size,
      avgLlmTokensPerRecord: mean(this.llmTokens, this.n),
    };
  }
}

export class StatisticsBuilder {
  private readonly all = new SplitAccumulator();
  private readonly bySplit = new Map<DatasetSplit, SplitAccumulator>();
  private readonly targetLines = new TargetLengthCounter();

  /** Adds one accepted record; pass its measures when they were computed already (the report does). */
  add(record: StatRecord, measures: RecordMeasures = measureRecord(record)): RecordMeasures {
    const split = record.split ?? 'train';
    if (!this.bySplit.has(split)) this.bySplit.set(split, new SplitAccumulator());
    this.bySplit.get(split)!.add(record, measures);
    this.all.add(record, measures);
    this.targetLines.add(split, measures.target.lines);
    return measures;
  }

  result(usage: Usage | null): DatasetStatistics {
    const all = this.all.result();
    const splits: Partial<Record<DatasetSplit, SplitStatistics>> = {};
    for (const split of SPLITS) {
      const acc = this.bySplit.get(split);
      if (acc) splits[split] = acc.result();
    }
    const libraries = Object.fromEntries([...this.all.libraryCounts()].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)));
    const perAcceptedExample =
      usage && all.functions > 0
        ? {
            calls: round3(usage.calls / all.functions),
            tokens: round3((usage.promptTokens + usage.completionTokens) / all.functions),
            costUsd: Math.round((usage.costUsd / all.functions) * 1e6) / 1e6,
          }
        : null;
    return { tokenizer: STATISTICS_TOKENIZER, splits, all, libraries, perAcceptedExample, targetLines: this.targetLines.result() };
  }
}

/** Table 4 of a stream of accepted records, with the run's LLM usage totals for the cost per example. */
export async function datasetStatistics(records: AsyncIterable<StatRecord> | Iterable<StatRecord>, usage: Usage | null): Promise<DatasetStatistics> {
  const builder = new StatisticsBuilder();
  for await (const record of records) builder.add(record);
  return builder.result(usage);
}

/** RepoST's published Table 4 (REPOST-TRAIN and REPOST-EVAL), shown beside a run's figures. */
export const REPOST_PAPER_TABLE_4: Record<DatasetSplit, Partial<SplitStatistics>> = {
  train: { avgTargetTokens: 112.4, avgTargetLines: 12.8, avgEvalScriptTokens: 842.5, avgEvalScriptLines: 75.7, avgTestsPerScript: 5.7, avgBranchCoverage: 0.978, standaloneShare: 0.281, externalLibraries: 894 },
  eval: { avgTargetTokens: 102.7, avgTargetLines: 9.9, avgEvalScriptTokens: 1217.5, avgEvalScriptLines: 122.3, avgTestsPerScript: 8.2, avgBranchCoverage: 1, standaloneShare: 0.264, externalLibraries: 106 },
};
