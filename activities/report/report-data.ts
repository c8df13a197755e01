/**
 * Everything a run's report shows, gathered in one pass over the run: per-record measures (the
 * same ones as the Table 4 statistics), rejections grouped by stage and reason, packages, and the
 * LLM spend. Scripts and exchanges are handed to `sink` as each record streams by, so they are
 * never all in memory at once.
 */
import type { ExchangeIndexEntry } from '../store/exchanges';
import type { Usage } from '../store/usage';
import type { ProductRecord } from '../dataset/product-record';
import { measureRecord } from '../dataset/record-measures';
import { REJECTION_STAGES } from '../dataset/records';
import type { Rejection } from '../store/records';
import type { RunInfo, RunReader, RunSummaryView } from '../dataset/run-reader';
import { SolvabilityFiguresBuilder, type SolvabilityFigures } from '../dataset/solvability-figures';
import { StatisticsBuilder, type DatasetStatistics } from '../dataset/statistics';
import { collectClassReport, type ClassReportData } from './class-section';

export interface RecordRow {
  functionId: string;
  repo: string;
  path: string;
  qualname: string;
  split: string;
  license: string | null;
  coverage: number | null;
  /** Killed / run of the target's mutants; null when the run did not score it. */
  mutationScore: number | null;
  /** The stability check's verdict, when there was one. */
  stability: string | null;
  tests: number;
  scriptLines: number;
  scriptTokens: number;
  targetLines: number;
  targetTokens: number;
  debugRounds: number;
  coverageRounds: number;
  llmTokens: number;
  astEqual: boolean | null;
  functionality: string | null;
  libraries: string[];
  exchanges: number;
  /** The solvability stage's solve rate (null: not checked), and the assertions it removed. */
  solveRate: number | null;
  removedAssertions: { line: number; text: string }[];
}

export interface RejectionRow {
  functionId: string;
  repo: string;
  path: string;
  qualname: string;
  stage: string;
  reason: string;
  /** The reason's leading clause, which names its kind ("parse_no_code_block", "tests judged incorrect"). */
  reasonKind: string;
  rounds: number;
  llmTokens: number;
  exchanges: number;
}

export interface ReasonGroup {
  stage: string;
  reasonKind: string;
  count: number;
  example: string;
}

export interface RunReportData {
  runId: string;
  info: RunInfo;
  summary: RunSummaryView;
  statistics: DatasetStatistics;
  records: RecordRow[];
  rejections: RejectionRow[];
  reasons: ReasonGroup[];
  /** Installed distributions across accepted records: name -> versions seen and records using it. */
  installed: { name: string; versions: string[]; records: number }[];
  /** The solvability stage's figures over the accepted records. */
  solvability: SolvabilityFigures;
  usage: Usage | null;
  generatedAt: string;
  /** The run's class environments, when it made any. */
  classes: ClassReportData | null;
}

/** What the report writes beside itself for each function. */
export interface ReportSink {
  script(functionId: string, script: string): Promise<void>;
  exchanges(functionId: string, title: string, entries: ExchangeIndexEntry[]): Promise<void>;
}

/** The part of a rejection reason before its first colon (or its first 80 characters). */
export function reasonKindOf(reason: string): string {
  const head = reason.split(/:\s/, 1)[0]!.trim();
  return head.length <= 80 ? head : `${head.slice(0, 77)}...`;
}

function recordRow(r: ProductRecord, m: ReturnType<typeof measureRecord>, exchanges: number): RecordRow {
  return {
    functionId: r.function_id,
    repo: r.repo_name,
    path: r.func_path,
    qualname: r.qualname,
    split: r.split,
    license: r.license ?? null,
    coverage: r.coverage_rate,
    mutationScore: r.mutation_score ?? null,
    stability: r.stability ?? null,
    tests: m.tests,
    scriptLines: m.evalScript.lines,
    scriptTokens: m.evalScript.tokens,
    targetLines: m.target.lines,
    targetTokens: m.target.tokens,
    debugRounds: r.debug_rounds,
    coverageRounds: r.coverage_rounds,
    llmTokens: r.llm_tokens,
    astEqual: r.sandbox_ast_check,
    functionality: r.sandbox_functionality_check,
    libraries: m.externalLibraries,
    exchanges,
    solveRate: r.solve_rate ?? null,
    removedAssertions: r.solvability?.removed_assertions ?? [],
  };
}

function rejectionRow(r: Rejection, exchanges: number): RejectionRow {
  return {
    functionId: r.function_id,
    repo: r.repo_name,
    path: r.func_path,
    qualname: r.qualname,
    stage: r.stage,
    reason: r.reason,
    reasonKind: reasonKindOf(r.reason),
    rounds: r.debug_rounds + r.coverage_rounds,
    llmTokens: r.llm_tokens,
    exchanges,
  };
}

export async function collectRunReport(reader: RunReader, sink: ReportSink, now = new Date()): Promise<RunReportData> {
  const [info, summary] = await Promise.all([reader.info(), reader.summary()]);
  const builder = new StatisticsBuilder();
  const solvability = new SolvabilityFiguresBuilder();
  const records: RecordRow[] = [];
  const installed = new Map<string, { versions: Set<string>; records: number }>();
  for await (const r of reader.records()) {
    const measures = builder.add(r);
    solvability.add(r);
    const entries = await reader.exchanges(r.function_id);
    await sink.script(r.function_id, r.eval_script);
    await sink.exchanges(r.function_id, `${r.repo_name} ${r.func_path}::${r.qualname}`, entries);
    records.push(recordRow(r, measures, entries.length));
    for (const p of r.packages) {
      const seen = installed.get(p.name) ?? { versions: new Set<string>(), records: 0 };
      seen.versions.add(p.version);
      seen.records++;
      installed.set(p.name, seen);
    }
  }
  const rejections: RejectionRow[] = [];
  const groups = new Map<string, ReasonGroup>();
  for await (const r of reader.rejections()) {
    const entries = await reader.exchanges(r.function_id);
    await sink.exchanges(r.function_id, `${r.repo_name} ${r.func_path}::${r.qualname} (rejected at ${r.stage})`, entries);
    const row = rejectionRow(r, entries.length);
    rejections.push(row);
    const key = `${row.stage}\u0000${row.reasonKind}`;
    const group = groups.get(key) ?? { stage: row.stage, reasonKind: row.reasonKind, count: 0, example: row.reason };
    group.count++;
    groups.set(key, group);
  }
  const stageRank = (s: string) => (REJECTION_STAGES as readonly string[]).indexOf(s);
  const reasons = [...groups.values()].sort((a, b) => stageRank(a.stage) - stageRank(b.stage) || b.count - a.count || a.reasonKind.localeCompare(b.reasonKind));
  const usage = summary.llm?.total ?? null;
  return {
    runId: reader.runId,
    info,
    summary,
    statistics: builder.result(usage),
    records,
    rejections,
    reasons,
    solvability: solvability.result(summary.rejectedAt.solvability ?? 0),
    installed: [...installed].map(([name, s]) => ({ name, versions: [...s.versions].sort(), records: s.records })).sort((a, b) => b.records - a.records || a.name.localeCompare(b.name)),
    usage,
    generatedAt: now.toISOString(),
    classes: await collectClassReport(reader, summary.classes),
  };
}
