/**
 * The payloads that cross between the evaluation workflows and their activities. Small by
 * design (docs/architecture.md, invariant 1): ids, artifact keys, counters and one-line summaries. Prompts,
 * answers, candidates, scripts and run outputs are artifacts.
 */
import type { Usage } from '../store/usage';
import type { ScriptAssertion } from './assertions';
import type { DatasetMeta } from './dataset';
import type { SampleOutcome } from './outcome';
import type { DocstringMode } from './settings';

/** A page of the run's items: the dataset is stored as pages so no payload grows with it. */
export interface EvalItemIndex {
  dataset: DatasetMeta;
  total: number;
  /** Artifact keys of the pages (JSON lists of `EvalItem`), in dataset order. */
  pages: string[];
}

/** One function of the dataset; its record (script, context, ground truth) is an artifact. */
export interface EvalItem {
  functionId: string;
  /** Artifact key of `StoredEvalRecord` (JSON). */
  recordKey: string;
  repo: string;
  qualname: string;
}

export interface PreparedPrompt {
  /** Artifact key of the rendered `solve` messages (JSON). */
  promptKey: string;
  /** Artifact key of the context shown (target body removed), reused by repair and test prompts. */
  contextKey: string;
  /** The description the prompt carries: `missing` when the original had none to keep or rewrite. */
  docstring: DocstringMode | 'missing';
  hasOriginalDocstring: boolean;
  /** Artifact key of the generated description the prompt shows (null: none was generated). */
  docstringKey: string | null;
  /** The `solve` template's version the prompt was rendered with. */
  promptVersion: string;
  usage: Usage;
}

/** A model answer turned into a candidate, or why it holds none. */
export interface CandidateRef {
  /** Artifact key of the candidate (JSON: code, preamble, bare), or null when the answer has no code. */
  candidateKey: string | null;
  noCode: string | null;
  exchangeKey: string;
  usage: Usage;
}

export interface CandidateRun extends SampleOutcome {
  /** Artifact key of the full sandbox result (output, traceback), or null when nothing ran. */
  resultKey: string | null;
  durationMs: number;
  /** Preamble imports the harness left out (the script defines their names, or they are the repository's own). */
  dropped?: string[];
}

/** An evaluation task built from a function the crawl is checking (the solvability stage). */
export interface SolvabilityTask {
  item: EvalItem;
  /** Whether the function has a docstring of its own. */
  hasDocstring: boolean;
  /** The model that writes the implementations. */
  model: string;
}

/** An assertion of a record's script at which implementations failed, with what they ran into. */
export interface FailingAssertion extends ScriptAssertion {
  /** Failing runs that stopped at it. */
  runs: number;
  /** Their one-line summaries (distinct, a few). */
  failures: string[];
}

export type AssertionVerdict =
  | { ok: true; determined: boolean; reasoning: string; promptVersion: string; usage: Usage }
  | { ok: false; reason: string; usage: Usage };

export type AssertionRemoval = { ok: true; item: EvalItem; scriptKey: string; removed: ScriptAssertion[] } | { ok: false; reason: string };

export interface SampleRound {
  round: number;
  candidateKey: string | null;
  run: CandidateRun;
  usage: Usage;
}

/**
 * One sample: its first answer (round 0) and the repairs that followed. `error` is set when a
 * step of the sample failed for good (an LLM call or sandbox run that exhausted its retries): a
 * sample without rounds is left out of Pass@k; one with rounds keeps them and stops repairing.
 */
export interface SampleTrace {
  sample: number;
  rounds: SampleRound[];
  error: string | null;
}

export interface MethodRanking {
  /** `n@k`: expected share of functions whose k best-ranked candidates include a passing one. */
  hitAtK: Record<string, number>;
  /** `Pr@k`: expected share of the k best-ranked tests the ground truth passes (null: no tests). */
  precisionAtK: Record<string, number | null>;
  /** The best-ranked sample (its number). */
  top: number | null;
}

export interface RankingSummary {
  tests: number;
  /** Tests the ground truth passes. */
  testsTruthPasses: number;
  methods: Record<'genx' | 'codet' | 'random', MethodRanking>;
  genxIterations: number;
  genxConverged: boolean;
}

export interface TrainingTargets {
  /** Artifact key of this function's SFT examples (JSON array), or null when none. */
  examplesKey: string | null;
  examples: number;
  /** Passing candidates dropped as duplicates of an earlier one or of the ground truth. */
  duplicates: number;
  /** Passing candidates Python could not parse on their own (kept out). */
  unparsable: number;
}

export interface AugmentationResult {
  /** Artifact key of the script with the extra test, or null when nothing was kept. */
  scriptKey: string | null;
  proposed: number;
  kept: number;
  /** Why inputs were dropped or the augmentation was not used, one line. */
  note: string;
  usage: Usage;
}

/** Everything a function's result line is written from. */
export interface FunctionEvalResult {
  functionId: string;
  /** Set when the function could not be evaluated (no prompt, no usable sample, its workflow failed). */
  error: string | null;
  /** Steps that failed for good while the rest was kept (a ranking, the training targets). */
  stepErrors: string[];
  prompt: PreparedPrompt | null;
  /** Tokens spent on docstrings that came out unusable (when no prompt could be made). */
  unusedDocstringUsage: Usage | null;
  samples: SampleTrace[];
  ranking: RankingSummary | null;
  rankingUsage: Usage | null;
  training: TrainingTargets | null;
  augmentation: AugmentationResult | null;
}

/** What a function's child workflow returns to the run. */
export interface FunctionEvalSummary {
  functionId: string;
  samples: number;
  passedInitially: number;
  passedFinally: number;
  error: string | null;
}

export interface EvalRunSummary {
  runId: string;
  functions: number;
  errors: number;
  /** Headline numbers, e.g. `pass@1`; the full summary is in eval-summary.json. */
  headline: Record<string, number | null>;
}
