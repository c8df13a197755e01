/**
 * The payloads that cross between workflows and activities. They stay small (DESIGN invariant 1):
 * ids, artifact keys, counters and short reasons; code, logs and transcripts are artifacts.
 * Workflows import these as types only.
 */

/** Where a repository comes from. */
export type RepoSource =
  | { kind: 'local'; path: string; name?: string }
  | { kind: 'github'; fullName: string; commit?: string };

/** The loop limits and thresholds one run uses, fixed at the run's start. */
export interface PipelineSettings {
  debugRounds: number;
  coverageRounds: number;
  coverageThreshold: number;
  regenerateAttempts: number;
  maxFunctionsPerRepo: number;
  seed: number;
  functionWindow: number;
  repoWindow: number;
  continueAsNewAfter: number;
}

export interface RunRef {
  runId: string;
  /** Output folder of the run: dataset, rejections, summary. */
  outDir: string;
}

export interface RepoSnapshot {
  repoId: string;
  /** A commit SHA, or for a local folder without git the hash of its tree. */
  commit: string;
  /** Absolute path of the pinned, read-only copy the analysis reads. */
  snapshotDir: string;
}

export interface SkippedRepo {
  source: RepoSource;
  reason: string;
}

export interface FunctionRef {
  functionId: string;
  repoId: string;
  commit: string;
  snapshotDir: string;
  path: string;
  qualname: string;
  /** Bare name of the function (last part of the qualified name). */
  name: string;
}

export interface CandidateList {
  functions: FunctionRef[];
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
  /** Top-level module names of the repository: never installed as packages when a script misses them. */
  localModules: string[];
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
  packages: { name: string; version: string }[];
}

export type FunctionStage =
  | 'prepare'
  | 'sandbox'
  | 'tests'
  | 'execute'
  | 'debug'
  | 'coverage'
  | 'ast_check'
  | 'functionality_check'
  | 'test_check'
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
  branchCoverage: number | null;
  tokens: number;
}

/** Everything the record writer needs; texts are artifact keys. */
export interface RecordInput {
  run: RunRef;
  fn: FunctionRef;
  prepared: PreparedFunction | null;
  outcome: FunctionOutcome;
  scriptKey: string | null;
  execution: ExecutionSummary | null;
  astEquivalent: boolean | null;
  functionality: string | null;
  testCorrectness: string | null;
  promptVersions: Record<string, string>;
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
  outDir: string;
  datasetFile: string;
  repositories: number;
  functions: number;
  accepted: number;
  rejected: number;
  funnel: Record<string, number>;
}

export interface TaskQueues {
  workflows: string;
  io: string;
  llm: string;
  sandbox: string;
}
