/**
 * The activity interfaces, one per task queue. Workflows import these as types only; the
 * implementations are created by factories that receive their dependencies (activities/index.ts).
 */
import type {
  CandidateList,
  ExecutionSummary,
  FunctionRef,
  LlmStepResult,
  PipelineSettings,
  PreparedFunction,
  RecordInput,
  RepoOutcome,
  RepoSnapshot,
  RepoSource,
  RunRef,
  RunSummary,
  VerdictResult,
} from './contracts';
import type { OpenBenchmarkRunInput, OpenedBenchmarkRun } from './benchmark/open-run';

export interface IoActivities {
  loadSources(input: { sourcesKey: string; offset: number; limit: number }): Promise<{ sources: RepoSource[]; total: number }>;
  snapshotRepository(input: { run: RunRef; source: RepoSource }): Promise<{ ok: true; snapshot: RepoSnapshot } | { ok: false; reason: string }>;
  listCandidates(input: { run: RunRef; snapshot: RepoSnapshot; settings: PipelineSettings }): Promise<CandidateList>;
  prepareFunction(input: { fn: FunctionRef }): Promise<{ ok: true; prepared: PreparedFunction } | { ok: false; reason: string }>;
  writeRecord(input: RecordInput): Promise<void>;
  writeRepoOutcome(input: { run: RunRef; index: string; outcome: RepoOutcome }): Promise<void>;
  finalizeRun(input: { run: RunRef }): Promise<RunSummary>;
}

interface StepInput {
  run: RunRef;
  fn: FunctionRef;
  prepared: PreparedFunction;
}

export interface LlmActivities {
  generateSandboxScript(input: StepInput & { attempt: number }): Promise<LlmStepResult>;
  generateTests(input: StepInput & { sandboxScriptKey: string; attempt: number }): Promise<LlmStepResult>;
  debugScript(input: StepInput & { scriptKey: string; resultKey: string; round: number }): Promise<LlmStepResult>;
  improveCoverage(input: StepInput & { scriptKey: string; resultKey: string; round: number }): Promise<LlmStepResult>;
  checkFunctionality(input: StepInput & { scriptKey: string }): Promise<VerdictResult>;
  checkTests(input: StepInput & { scriptKey: string }): Promise<VerdictResult>;
}

export interface SandboxActivities {
  executeScript(input: { fn: FunctionRef; prepared: PreparedFunction; scriptKey: string; coverage: boolean; installs: string[] }): Promise<ExecutionSummary>;
  astCheck(input: { fn: FunctionRef; prepared: PreparedFunction; scriptKey: string }): Promise<{ equivalent: boolean; difference: string | null }>;
}

/** Live benchmark firings and run reports (task queue `io`). */
export interface BenchmarkActivities {
  openBenchmarkRun(input: OpenBenchmarkRunInput): Promise<OpenedBenchmarkRun>;
  writeRunReport(input: { run: RunRef }): Promise<{ file: string; records: number; rejections: number }>;
}
