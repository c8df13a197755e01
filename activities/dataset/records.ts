/**
 * Dataset records. Each function's end (accepted or rejected) is written once to the store, keyed
 * by run and function id, so re-running or replaying a function replaces its own record and never
 * duplicates or loses one (docs/architecture.md, invariant 3). The run's summary is computed from the records a
 * page at a time, and the run's files (`dataset.jsonl` in RepoST's format plus our fields,
 * `rejections.jsonl`, `summary.json`, `run.json`) are exported from the store as streams, so a run
 * of any size finalizes in bounded memory.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { once } from 'node:events';
import type { Artifacts } from '../store/artifacts';
import { writeFileAtomic } from '../store/artifacts';
import type { FunctionStage, RecordInput, SolvabilityResult } from '../contracts';
import type { DatasetRecord } from '../store/records';
import { addUsage, callUsage, emptyUsage, type Usage, type UsageEntry } from '../store/usage';

/** Stages in pipeline order; a function rejected at a stage passed every stage before it. */
export const STAGE_ORDER: readonly FunctionStage[] = [
  'prepare',
  'sandbox',
  'tests',
  'execute',
  'debug',
  'coverage',
  'stability',
  'mutation',
  'ast_check',
  'functionality_check',
  'test_check',
  'solvability',
  'accepted',
];

/** Where a function can end as a rejection: every pipeline stage, or `internal` (its workflow failed). */
export const REJECTION_STAGES: readonly FunctionStage[] = [...STAGE_ORDER.filter((s) => s !== 'accepted'), 'internal'];

/** The files of a run folder. */
export function runPaths(outDir: string) {
  return {
    dataset: path.join(outDir, 'dataset.jsonl'),
    rejections: path.join(outDir, 'rejections.jsonl'),
    summary: path.join(outDir, 'summary.json'),
    run: path.join(outDir, 'run.json'),
    /** Written when the run made class environments. */
    classes: path.join(outDir, 'classes-dataset.jsonl'),
    classRejections: path.join(outDir, 'classes-rejections.jsonl'),
  };
}

export async function textOf(store: Artifacts, key: string | null | undefined): Promise<string> {
  return key ? store.get(key) : '';
}

export interface Thresholds {
  coverage: number;
  astCheckRequired: boolean;
  mutationScore?: number | null;
}

/** A record's test-strength fields: its mutation score and counts, its survivors, its stability. */
function strengthFields(input: RecordInput, thresholds: Thresholds, survivors: string | null) {
  const m = input.mutation ?? null;
  return {
    mutation_score: m?.score ?? null,
    mutants: m
      ? {
          made: m.made,
          killed: m.killed,
          survived: m.survived,
          timed_out: m.timedOut,
          not_run: m.notRun,
          left_out: { output: m.leftOut?.output ?? 0, message: m.leftOut?.message ?? 0, equivalent: m.leftOut?.equivalent ?? 0 },
        }
      : null,
    mutation_survivors: m && m.survived > 0 ? survivors : null,
    mutation_min_score: thresholds.mutationScore ?? null,
    mutation_rounds: input.outcome.mutationRounds ?? 0,
    stability: input.stability?.verdict ?? null,
    stability_reason: input.stability?.reason ?? null,
  };
}

/** What the record builders read of a run's result artifact: the coverage report (and a class's per method). */
export interface StoredCoverage {
  coverage?: {
    summary?: string;
    rate?: number;
    methods?: { name: string; rate: number; hasBranches: boolean; lines: { rate: number }; branches: { rate: number | null } }[];
  } | null;
}

/** The final run's result artifact (its coverage report), when the target got that far. */
export async function finalResult(store: Artifacts, input: RecordInput): Promise<StoredCoverage | null> {
  return input.execution ? store.getJson<StoredCoverage>(input.execution.resultKey) : null;
}

/**
 * The fields every accepted record carries, whatever its target's kind, written once: where it
 * comes from (commit, its date, license and its source), its script, coverage, checks, packages
 * (each with the date its version was chosen as of), thresholds, rounds and test strength. A
 * kind's record adds its own names (`func_name`/`class_name`, ...) and fields.
 */
export async function sharedRecordFields(store: Artifacts, input: RecordInput, thresholds: Thresholds, result: StoredCoverage | null) {
  const { run, fn, outcome, execution, prepared } = input;
  const m = input.mutation ?? null;
  return {
    idx: fn.functionId,
    repo_name: fn.repoId,
    orig_context: await textOf(store, prepared?.contextKey),
    eval_script: await textOf(store, input.scriptKey),
    coverage_rate: result?.coverage?.rate ?? null,
    coverage_report: result?.coverage?.summary ?? '',
    sandbox_ast_check: input.astEquivalent,
    sandbox_functionality_check: input.functionality,
    test_correctness_check: input.testCorrectness,
    commit_id: fn.commit,
    commit_date: fn.commitDate ?? null,
    qualname: fn.qualname,
    run_id: run.runId,
    split: fn.split,
    coverage_threshold: thresholds.coverage,
    ast_check_required: thresholds.astCheckRequired,
    license: fn.license,
    license_source: fn.licenseSource ?? null,
    standalone: prepared?.standalone ?? null,
    ...(prepared?.unsupplied ? { context_unsupplied: prepared.unsupplied } : {}),
    packages: (execution?.packages ?? []).map((p) => ({ name: p.name, version: p.version, as_of: p.asOf ?? null })),
    prompt_versions: input.promptVersions,
    debug_rounds: outcome.debugRounds,
    coverage_rounds: outcome.coverageRounds,
    llm_tokens: outcome.tokens,
    ...strengthFields(input, thresholds, m ? await textOf(store, m.survivorsKey) : null),
  };
}

/** A target's rejection: its stage, reason and rounds (the same for every kind). */
export function rejectionOf(input: RecordInput) {
  const { fn, outcome } = input;
  return {
    function_id: fn.functionId,
    repo_name: fn.repoId,
    func_path: fn.path,
    qualname: fn.qualname,
    split: fn.split,
    stage: outcome.stage,
    reason: outcome.reason.slice(0, 2000),
    debug_rounds: outcome.debugRounds,
    coverage_rounds: outcome.coverageRounds,
    llm_tokens: outcome.tokens,
    mutation_rounds: outcome.mutationRounds ?? 0,
    mutation_score: input.mutation?.score ?? null,
  };
}

/** The record's solvability fields (null when its split does not go through the stage). */
export async function solvabilityFields(store: Artifacts, s: SolvabilityResult | null): Promise<Pick<DatasetRecord, 'solve_rate' | 'solvability' | 'generated_docstring'>> {
  if (!s) return { solve_rate: null, solvability: null, generated_docstring: null };
  return {
    solve_rate: s.samples > 0 ? s.passed / s.samples : null,
    solvability: {
      model: s.model,
      samples: s.samples,
      passed: s.passed,
      passed_initially: s.passedInitially,
      docstring: s.docstring,
      missing_docstring: s.missingDocstring,
      judged: s.judged,
      removed_assertions: s.removed,
    },
    generated_docstring: s.docstringKey ? await store.get(s.docstringKey) : null,
  };
}

/**
 * Counts of functions that reached each stage; rejections per stage plus accepted add up to the
 * total. A function whose workflow failed (`internal`) counts as rejected, not as reaching a stage.
 */
export function funnelOf(stages: Iterable<FunctionStage>): { reached: Record<string, number>; rejectedAt: Record<string, number> } {
  const funnel = new FunnelCounter();
  for (const s of stages) funnel.add(s);
  return funnel.result();
}

/** The funnel, counted one record at a time. */
export class FunnelCounter {
  private readonly reached: Record<string, number> = Object.fromEntries(STAGE_ORDER.map((s) => [s, 0]));
  private readonly rejectedAt: Record<string, number> = Object.fromEntries(REJECTION_STAGES.map((s) => [s, 0]));

  add(stage: FunctionStage): void {
    const end = STAGE_ORDER.indexOf(stage);
    for (let i = 0; i <= end; i++) this.reached[STAGE_ORDER[i]!]!++;
    if (stage !== 'accepted') this.rejectedAt[stage] = (this.rejectedAt[stage] ?? 0) + 1;
  }

  result() {
    return { reached: { ...this.reached }, rejectedAt: { ...this.rejectedAt } };
  }
}

/** Writes lines to a file through a stream (bounded memory), atomically: temporary file, then rename. */
export class JsonLinesWriter {
  private readonly tmp: string;
  private readonly out: fs.WriteStream;
  count = 0;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.tmp = `${file}.${process.pid}.tmp`;
    this.out = fs.createWriteStream(this.tmp);
  }

  async write(row: unknown): Promise<void> {
    this.count += 1;
    if (!this.out.write(JSON.stringify(row) + '\n')) await once(this.out, 'drain');
  }

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
    await fsp.rename(this.tmp, this.file);
  }

  async abort(): Promise<void> {
    this.out.destroy();
    await fsp.rm(this.tmp, { force: true });
  }
}

export { writeFileAtomic };

/** LLM accounting of a run: totals, per repository and per step. */
export class UsageCounter {
  private total: Usage = emptyUsage();
  private readonly byRepo = new Map<string, Usage>();
  private readonly byStep = new Map<string, Usage>();
  /** Live calls and batch answers apart: they are priced differently (llm.prices' batch prices). */
  private readonly byMode = { live: emptyUsage(), batch: emptyUsage() };

  add(e: UsageEntry): void {
    const call = callUsage(e);
    this.total = addUsage(this.total, call);
    const mode = e.mode === 'batch' ? 'batch' : 'live';
    this.byMode[mode] = addUsage(this.byMode[mode], call);
    this.byRepo.set(e.repoId ?? '', addUsage(this.byRepo.get(e.repoId ?? ''), call));
    this.byStep.set(e.step ?? '', addUsage(this.byStep.get(e.step ?? ''), call));
  }

  result() {
    const table = (m: Map<string, Usage>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));
    return { total: this.total, byMode: { ...this.byMode }, byRepo: table(this.byRepo), byStep: table(this.byStep) };
  }
}
