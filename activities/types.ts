/**
 * The activity interfaces, one per task queue. Workflows import these as types only; the
 * implementations are created by factories that receive their dependencies (activities/index.ts).
 */
import type {
  CandidateList,
  ClassCandidateList,
  ExecutionSummary,
  FunctionOutcome,
  FunctionRef,
  LlmStepResult,
  MutationScore,
  PreparedFunction,
  PreviousAnswer,
  RecordInput,
  RepoOutcome,
  RepoSnapshot,
  RepoSource,
  RunOutputs,
  RunRef,
  RunSummary,
  StabilityVerdict,
  VerdictResult,
} from './contracts';
import type { OpenBenchmarkRunInput, OpenedBenchmarkRun } from './benchmark/open-run';

export interface IoActivities {
  loadSources(input: { run: RunRef; sourcesKey: string; offset: number; limit: number }): Promise<{ sources: RepoSource[]; total: number }>;
  snapshotRepository(input: { run: RunRef; source: RepoSource }): Promise<{ ok: true; snapshot: RepoSnapshot } | { ok: false; reason: string }>;
  /** Lists the candidates into pages in the store and records them as the repository's progress. */
  listCandidates(input: { run: RunRef; snapshot: RepoSnapshot; index: number; source: RepoSource }): Promise<CandidateList>;
  /**
   * Lists the repository's classes through the class filters and samples the class environments
   * (at most the run's per-repository cap) into pages, recorded with the repository's progress
   * after its function pages, with the filters' counts.
   */
  listClassCandidates(input: { run: RunRef; snapshot: RepoSnapshot; index: number; source: RepoSource }): Promise<ClassCandidateList>;
  /** One page of candidates, without the functions that already have a record in the run (a resumed run). */
  loadCandidatePage(input: { run: RunRef; pageKey: string }): Promise<{ functions: FunctionRef[]; alreadyRecorded: number }>;
  prepareFunction(input: { run: RunRef; fn: FunctionRef }): Promise<{ ok: true; prepared: PreparedFunction } | { ok: false; reason: string }>;
  writeRecord(input: RecordInput): Promise<void>;
  /** A function whose workflow failed: recorded as rejected at stage `internal`, unless it already has a record. */
  writeFailedFunction(input: { run: RunRef; fn: FunctionRef; reason: string }): Promise<FunctionOutcome>;
  writeRepoOutcome(input: { run: RunRef; index: number; outcome: RepoOutcome; candidates: CandidateList | null }): Promise<void>;
  finalizeRun(input: { run: RunRef }): Promise<RunSummary>;
  /** The run's files and report, into its folder (the manifest's `outDir`, else `<dataDir>/runs/<run id>`). */
  writeRunOutputs(input: { run: RunRef }): Promise<RunOutputs>;
}

interface StepInput {
  run: RunRef;
  fn: FunctionRef;
  prepared: PreparedFunction;
}

export interface LlmActivities {
  generateSandboxScript(input: StepInput & { attempt: number; previous?: PreviousAnswer }): Promise<LlmStepResult>;
  generateTests(input: StepInput & { sandboxScriptKey: string; attempt: number; previous?: PreviousAnswer }): Promise<LlmStepResult>;
  debugScript(input: StepInput & { scriptKey: string; resultKey: string; round: number; previous?: PreviousAnswer }): Promise<LlmStepResult>;
  improveCoverage(input: StepInput & { scriptKey: string; resultKey: string; round: number; previous?: PreviousAnswer }): Promise<LlmStepResult>;
  /** Tests that tell the surviving mutants (`survivorsKey`, their diffs) from the ground truth; `score` the score so far. */
  killMutants(input: StepInput & { scriptKey: string; survivorsKey: string; score: number; round: number; previous?: PreviousAnswer }): Promise<LlmStepResult>;
  checkFunctionality(input: StepInput & { scriptKey: string }): Promise<VerdictResult>;
  checkTests(input: StepInput & { scriptKey: string }): Promise<VerdictResult>;
}

export interface SandboxActivities {
  executeScript(input: { run: RunRef; fn: FunctionRef; prepared: PreparedFunction; scriptKey: string; coverage: boolean; installs: string[] }): Promise<ExecutionSummary>;
  astCheck(input: { run: RunRef; fn: FunctionRef; prepared: PreparedFunction; scriptKey: string }): Promise<{ equivalent: boolean; difference: string | null }>;
  /** The script's mutation score: its target's mutants each placed as the new implementation, in one container run. */
  scoreMutants(input: {
    run: RunRef;
    fn: FunctionRef;
    prepared: PreparedFunction;
    scriptKey: string;
    installs: string[];
    /**
     * The mutants' sample, from the run's pipeline settings (`loops.mutation.cap`, `seed`). Optional:
     * an activity input only ever gains optional fields (docs/architecture.md), and a task
     * scheduled before the workflows passed it takes the run's frozen configuration's, as it did then.
     */
    sample?: { cap: number; seed: number };
  }): Promise<MutationScore>;
  /** The script run with the ground truth `runs` times, each with another hash seed, run folder and clock. */
  checkStability(input: { run: RunRef; fn: FunctionRef; prepared: PreparedFunction; scriptKey: string; installs: string[]; runs: number }): Promise<StabilityVerdict>;
}

/** Live benchmark firings (task queue `io`). */
export interface BenchmarkActivities {
  openBenchmarkRun(input: OpenBenchmarkRunInput): Promise<OpenedBenchmarkRun>;
}
