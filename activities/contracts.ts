/**
 * The payloads that cross between workflows and activities. They stay small (docs/architecture.md, invariant 1):
 * ids, artifact keys, counters and short reasons; code, logs and transcripts are artifacts.
 * Workflows import these as types only.
 */

/** Where a repository comes from. */
export type RepoSource =
  | {
      kind: 'local';
      path: string;
      name?: string;
      split?: Split;
      /**
       * Set by the launcher once it stored the folder's snapshot: workers elsewhere cannot read the
       * path. `commitDate`: the checkout's commit date (null for a folder pinned by its tree's hash).
       */
      pinned?: { repoId: string; commit: string; commitDate?: string | null };
    }
  | { kind: 'github'; fullName: string; commit?: string; split?: Split };

/** RepoST's splits: training data, or an evaluation set (stricter thresholds). */
export type Split = 'train' | 'eval';

/**
 * What the workflows themselves need of a run's settings (loop limits, thresholds, windows,
 * timeouts), fixed at the run's start. Activities read the full frozen settings by reference.
 */
export interface PipelineSettings {
  debugRounds: number;
  coverageRounds: number;
  /** Coverage a training record must reach (RepoST: 0.8). */
  coverageThreshold: number;
  /** Coverage an evaluation record must reach (RepoST: 1.0). */
  evalCoverageThreshold: number;
  /** Evaluation records need the sandboxed function's AST to equal the original's. */
  evalRequiresAstMatch: boolean;
  regenerateAttempts: number;
  /** Test strength after the coverage rounds (absent in runs frozen before it existed: off). */
  mutation?: { enabled: boolean; minScore: number; evalMinScore: number; rounds: number };
  /** The stability check: runs of the script with the ground truth (0: off). */
  stability?: { runs: number; keepFlaky: boolean };
  maxFunctionsPerRepo: number;
  /** What the crawl makes environments of (absent in runs frozen before classes: functions). */
  targets?: CrawlTargets;
  /** Classes sampled per repository when classes are made (absent: none). */
  maxClassesPerRepo?: number;
  seed: number;
  functionWindow: number;
  repoWindow: number;
  continueAsNewAfter: number;
  /** The solvability stage (absent in runs frozen before it existed: then it is off). */
  solvability?: SolvabilitySettings;
  /**
   * Activity budgets derived from the configuration (ms), and the execution timeouts of child
   * workflows (absent in runs frozen before they existed: then none applies).
   */
  timeouts: {
    llmMs: number;
    sandboxMs: number;
    ioMs: number;
    heartbeatMs: number;
    repoWorkflowMs?: number;
    functionWorkflowMs?: number;
    /** A live benchmark firing's crawl, when the configuration sets it (else derived from its repositories: `crawlWorkflowBudgetMs`). */
    crawlWorkflowMs?: number;
    /** What a step in batch mode may wait for its batch (present when one is: `llmBatchActivities`). */
    llmBatchMs?: number;
  };
  /**
   * The LLM activities whose step is in batch mode (`llm.mode`, `llm.modes`): they wait for a
   * batch's answer, so they get `timeouts.llmBatchMs` and no heartbeat timeout (absent: all live).
   */
  llmBatchActivities?: string[];
}

/** What the workflows need of `loops.solvability`. */
export interface SolvabilitySettings {
  /** Per split: whether its records go through the stage. */
  enabled: Record<Split, boolean>;
  /** Implementations asked from the prompt alone. */
  k: number;
  /** A function without a docstring gets a generated one, or its record is left out of the split. */
  missingDocstring: 'generate' | 'exclude';
  /** An assertion on behaviour the prompt does not determine is removed, or rejects the record. */
  undetermined: 'remove' | 'reject';
  /** Rounds of judging and removing while no implementation passes. */
  rounds: number;
}

/** A run as activities see it: its id, its frozen settings (artifact key) and the store it lives in. */
export interface RunRef {
  runId: string;
  settingsKey: string;
  storeId: string;
}

export interface RepoSnapshot {
  repoId: string;
  /** A commit SHA, or for a local folder without git the hash of its tree. */
  commit: string;
  /** When that commit was made (ISO 8601), its packages are resolved as of it; null when unknown (a tree's hash). */
  commitDate: string | null;
  split: Split;
  /** SPDX id of the repository's license when known. */
  license: string | null;
  /** Where the license came from: `github-api`, `file:<name>` (its license file), or `none`. */
  licenseSource?: string;
}

export interface SkippedRepo {
  source: RepoSource;
  reason: string;
}

/** What a pipeline workflow tests: a function (functionWorkflow) or a whole class (classWorkflow). */
export type TargetKind = 'function' | 'class';

/**
 * A function to turn into an environment, or (with `kind: 'class'`) a top-level class: then
 * `functionId` is the class's id, `qualname` and `name` its name, and every step of the pipeline
 * works on the whole class.
 */
export interface FunctionRef {
  functionId: string;
  repoId: string;
  commit: string;
  path: string;
  qualname: string;
  /** Bare name of the function (last part of the qualified name). */
  name: string;
  /** Set for an earlier, shadowed definition of the name in its file (see functionId()). */
  occurrence?: number;
  split: Split;
  license: string | null;
  /** The commit's date (the snapshot's), which the sandbox resolves the function's packages as of; absent or null: newest. */
  commitDate?: string | null;
  /** Absent for a function. */
  kind?: TargetKind;
  /** Where the license came from (see RepoSnapshot). */
  licenseSource?: string;
}

/** A class environment's target. */
export type ClassRef = FunctionRef & { kind: 'class' };

/** A repository's candidates, stored as pages of FunctionRefs so no payload grows with the repository. */
export interface CandidateList {
  pageKeys: string[];
  /** Candidates in all pages. */
  candidates: number;
  /** Functions found (kept or dropped by the filters). */
  total: number;
  dropped: number;
  skippedFiles: number;
}

/** What the pipeline needs to know about a function, with its texts in the artifact store. */
export interface PreparedFunction {
  sourceKey: string;
  contextKey: string;
  /** The original file's path and context cover only the target file (sandbox) or more (aggregate). */
  crossFile: boolean;
  standalone: boolean;
  dependencyCount: number;
  /** Names the context's code uses that the context does not supply (FunctionAnalysis.unsupplied, bounded); absent in earlier runs. */
  unsupplied?: string[];
  /** Top-level module names of the repository: never installed as packages when a script misses them. */
  localModules: string[];
  /** A class target: its methods (those of nested classes as `Inner.method`). */
  methods?: string[];
  /** A class target: artifact key of its facts for the record (`ClassFacts`: skeleton, documentation level, metrics). */
  classFactsKey?: string;
}

/** What a class's record carries beyond the pipeline's results, as the class corpus computes it. */
export interface ClassFacts {
  skeleton: string;
  documentation: 'full' | 'partial' | 'none';
  metrics: Record<string, number | null>;
  methodMetrics: { name: string; line: number; cyclomatic: number; essential: number; max_nesting: number }[];
}

/** A repository's class candidates (class environments), in pages like the functions. */
export interface ClassCandidateList {
  pageKeys: string[];
  /** Classes sampled (at most the per-repository cap). */
  candidates: number;
  /** Classes found, test classes included. */
  found: number;
  /** Classes the filters kept, before the cap. */
  kept: number;
  /** Classes dropped per class filter (each a named rule). */
  droppedBy: Record<string, number>;
}

/** Which targets a crawl makes environments of: functions (RepoST), functions and classes (`both`), or classes only. */
export type CrawlTargets = 'functions' | 'both' | 'classes';

/** An unusable earlier answer (no code, cut off, a failed sanity check): the next attempt is told what was wrong. */
export interface PreviousAnswer {
  exchangeKey: string;
  failure: string;
  detail: string;
}

export type LlmStepResult =
  | { ok: true; scriptKey: string; exchangeKey: string; promptVersion: string; tokens: number; installs: string[] }
  | { ok: false; failure: string; detail: string; exchangeKey: string | null; tokens: number };

export type VerdictResult =
  | { ok: true; answer: 'yes' | 'no' | 'same'; reasoning: string; promptVersion: string; tokens: number }
  | { ok: false; failure: string; detail: string; tokens: number };

export interface CoverageSummary {
  branchCoverage: number | null;
  lineCoverage: number;
  hasBranches: boolean;
  missingLines: number;
  missingBranches: number;
}

export interface ExecutionSummary {
  status: 'passed' | 'failed' | 'error' | 'timeout' | 'oom' | 'infrastructure';
  exitCode: number | null;
  durationMs: number;
  /** Artifact holding the full result (output, traceback, coverage report). */
  resultKey: string;
  /** One line for histories and rejections. */
  summary: string;
  coverage: CoverageSummary | null;
  /** `asOf`: the cutoff the version was chosen as of (the commit's date plus the grace period); absent: the newest release. */
  packages: { name: string; version: string; asOf?: string }[];
}

/** A record's mutation score (sandbox/mutation.ts); the survivors' diffs are an artifact. */
export interface MutationScore {
  /** scored; no_mutants (the body gave none); ground_truth_failed (the script fails with its ground truth). */
  status: 'scored' | 'no_mutants' | 'ground_truth_failed';
  /** killed / run; null unless scored. */
  score: number | null;
  made: number;
  /** The timed-out ones included. */
  killed: number;
  survived: number;
  timedOut: number;
  notRun: number;
  /** Mutants no allowed test can see, left out before running, by reason (output, message, equivalent). */
  leftOut?: Record<string, number>;
  /** Artifact: the surviving mutants' diffs, for a person to judge (an equivalent mutant cannot be told apart automatically). */
  survivorsKey: string;
  /** One line for histories and rejections. */
  summary: string;
}

/** The stability check's verdict on a script (sandbox/stability.ts). */
export interface StabilityVerdict {
  verdict: 'stable' | 'flaky';
  /** What differed between the runs. */
  reason: string | null;
  runs: number;
}

export type FunctionStage =
  | 'prepare'
  | 'sandbox'
  | 'tests'
  | 'execute'
  | 'debug'
  | 'coverage'
  | 'stability'
  | 'mutation'
  | 'ast_check'
  | 'functionality_check'
  | 'test_check'
  /** Evaluation records: whether a model can implement the function from what its prompt shows. */
  | 'solvability'
  /** The function's workflow itself failed (a bug, a duplicate id, an exhausted activity): recorded, the crawl goes on. */
  | 'internal'
  | 'accepted';

export interface FunctionOutcome {
  functionId: string;
  path: string;
  qualname: string;
  accepted: boolean;
  /** Where it ended: the rejecting stage, or 'accepted'. */
  stage: FunctionStage;
  reason: string;
  debugRounds: number;
  coverageRounds: number;
  /** Rounds asking for tests that kill surviving mutants (absent before the stage existed). */
  mutationRounds?: number;
  branchCoverage: number | null;
  tokens: number;
}

/**
 * What a function must reach to be accepted: RepoST's training thresholds, or its stricter
 * evaluation ones. Chosen once, by the function's workflow, and written on its record.
 */
export interface RecordThresholds {
  coverage: number;
  /** The sandboxed function's AST must equal the original's (no LLM functionality check can admit it). */
  astCheckRequired: boolean;
  /** The mutation score the tests must reach; null: not scored. */
  mutationScore?: number | null;
}

/**
 * What the solvability stage found for a record: how many implementations written from the
 * prompt alone passed, where the prompt's description came from, and the assertions removed as
 * checking behaviour the prompt does not determine.
 */
export interface SolvabilityResult {
  /** The model that wrote the implementations. */
  model: string;
  /** Implementations scored: those asked for, less those the harness failed or whose step failed for good. */
  samples: number;
  /** Of those, the ones that pass the record's tests as they end up. */
  passed: number;
  /** The ones that passed the tests as they were before any assertion was removed. */
  passedInitially: number;
  /** Where the prompt's description came from: the function's docstring, or one generated from the ground truth. */
  docstring: 'original' | 'generated';
  /** Artifact key of the generated docstring (null: the original was shown). */
  docstringKey: string | null;
  /** The setting that applied to a function without a docstring. */
  missingDocstring: 'generate' | 'exclude';
  /** Failing assertions put to the judge. */
  judged: number;
  /** Assertions removed as checking behaviour the prompt does not determine (line and text in the script as it was). */
  removed: { line: number; text: string }[];
}

/** Everything the record writer needs; texts are artifact keys. */
export interface RecordInput {
  run: RunRef;
  fn: FunctionRef;
  thresholds: RecordThresholds;
  prepared: PreparedFunction | null;
  outcome: FunctionOutcome;
  scriptKey: string | null;
  execution: ExecutionSummary | null;
  astEquivalent: boolean | null;
  functionality: string | null;
  testCorrectness: string | null;
  promptVersions: Record<string, string>;
  /** The final script's mutation score (null: not scored). */
  mutation?: MutationScore | null;
  /** The final script's stability verdict (null: not checked). */
  stability?: StabilityVerdict | null;
  /** The solvability stage's findings (absent or null: the record's split does not go through it). */
  solvability?: SolvabilityResult | null;
}

export interface RepoOutcome {
  repoId: string | null;
  source: RepoSource;
  skipped: string | null;
  candidates: number;
  accepted: number;
  rejected: number;
}

export interface RunSummary {
  runId: string;
  repositories: number;
  functions: number;
  accepted: number;
  rejected: number;
  funnel: Record<string, number>;
}

/** Where a run's files went: its folder (on the io worker that wrote them) and what they hold. */
export interface RunOutputs {
  outDir: string;
  dataset: string;
  report: string;
  records: number;
  rejections: number;
}

/** What a crawl ends with: its summary, and its files (or why they could not be written). */
export interface CrawlOutcome extends RunSummary {
  outputs: RunOutputs | null;
  outputsError: string | null;
}

export interface TaskQueues {
  workflows: string;
  io: string;
  llm: string;
  sandbox: string;
}
