/**
 * The report's section on a run's class environments: which classes the class filters kept (per
 * rule), the stages they reached, the per-split figures of the accepted ones, and a row per class
 * environment, accepted or rejected. Absent for a run that made none. Everything from the run is
 * escaped.
 */
import type { ClassRunSummary } from '../dataset/class-summary';
import { STAGE_ORDER } from '../dataset/records';
import type { RunReader } from '../dataset/run-reader';
import type { ClassDatasetRecord, Rejection } from '../store/records';
import { escapeXml as esc, formatNumber, formatPercent } from './charts';

export interface ClassRow {
  classId: string;
  repo: string;
  path: string;
  name: string;
  split: string;
  methods: number;
  tests: number;
  coverage: number | null;
  methodsFullyCovered: number;
  documentation: string;
  debugRounds: number;
  coverageRounds: number;
  astEqual: boolean | null;
}

export interface ClassReportData {
  summary: ClassRunSummary;
  accepted: ClassRow[];
  rejected: { repo: string; path: string; name: string; split: string; stage: string; reason: string }[];
}

function classRow(r: ClassDatasetRecord): ClassRow {
  return {
    classId: r.class_id,
    repo: r.repo_name,
    path: r.class_path,
    name: r.class_name,
    split: r.split,
    methods: r.methods.length,
    tests: r.test_functions.length,
    coverage: r.coverage_rate,
    methodsFullyCovered: r.method_coverage.filter((m) => m.rate >= 1).length,
    documentation: r.documentation_level,
    debugRounds: r.debug_rounds,
    coverageRounds: r.coverage_rounds,
    astEqual: r.sandbox_ast_check,
  };
}

/** The class part of a run's report, or null when the run made no class environment. */
export async function collectClassReport(reader: RunReader, summary: ClassRunSummary | undefined): Promise<ClassReportData | null> {
  if (!summary) return null;
  const accepted: ClassRow[] = [];
  for await (const r of reader.classRecords()) accepted.push(classRow(r));
  const rejected: ClassReportData['rejected'] = [];
  for await (const r of reader.classRejections() as AsyncIterable<Rejection>) rejected.push({ repo: r.repo_name, path: r.func_path, name: r.qualname, split: r.split, stage: r.stage, reason: r.reason });
  return { summary, accepted, rejected };
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : formatPercent(x));
const num = (x: number | null | undefined) => (x === null || x === undefined ? '–' : formatNumber(x));

export function renderClassSection(data: ClassReportData | null): string {
  if (!data) return '';
  const s = data.summary;
  const sel = s.selection;
  const rules = Object.entries(sel.droppedBy)
    .map(([rule, n]) => `<tr><td><code>${esc(rule)}</code></td><td class="num">${formatNumber(n)}</td></tr>`)
    .join('');
  const stages = STAGE_ORDER.filter((st) => (s.funnel[st] ?? 0) > 0 || (s.rejectedAt[st] ?? 0) > 0)
    .map((st) => `<tr><td>${esc(st)}</td><td class="num">${formatNumber(s.funnel[st] ?? 0)}</td><td class="num">${formatNumber(s.rejectedAt[st] ?? 0)}</td></tr>`)
    .join('');
  const splits = Object.entries(s.statistics)
    .map(
      ([split, st]) =>
        `<tr><td>${esc(split)}</td><td class="num">${formatNumber(st!.classes)}</td><td class="num">${formatNumber(st!.repositories)}</td><td class="num">${num(st!.avgMethods)}</td><td class="num">${num(st!.avgClassLines)}</td>` +
        `<td class="num">${num(st!.avgTestFunctions)}</td><td class="num">${pct(st!.avgCoverage)}</td><td class="num">${pct(st!.avgMethodsFullyCovered)}</td>` +
        `<td>${esc(`full ${st!.documentation.full}, partial ${st!.documentation.partial}, none ${st!.documentation.none}`)}</td></tr>`,
    )
    .join('');
  const rows = data.accepted
    .map(
      (r) =>
        `<tr><td>${esc(r.repo)}</td><td><code>${esc(r.path)}::${esc(r.name)}</code></td><td>${esc(r.split)}</td><td class="num">${r.methods}</td><td class="num">${r.tests}</td>` +
        `<td class="num">${pct(r.coverage)}</td><td class="num">${r.methodsFullyCovered}/${r.methods}</td><td>${esc(r.documentation)}</td><td class="num">${r.debugRounds}/${r.coverageRounds}</td><td>${r.astEqual === null ? '–' : r.astEqual ? 'equal' : 'differs'}</td></tr>`,
    )
    .join('');
  const rejected = data.rejected
    .map((r) => `<tr><td>${esc(r.repo)}</td><td><code>${esc(r.path)}::${esc(r.name)}</code></td><td>${esc(r.split)}</td><td>${esc(r.stage)}</td><td class="reason">${esc(r.reason)}</td></tr>`)
    .join('');
  return (
    `<h2 id="classes">Class environments</h2>` +
    `<p class="muted">Whole classes through the same stages: ${formatNumber(sel.found)} classes found, ${formatNumber(sel.kept)} kept by the class filters, ${formatNumber(sel.sampled)} sampled; ` +
    `${formatNumber(s.accepted)} accepted and ${formatNumber(s.rejected)} rejected (<code>classes-dataset.jsonl</code>, <code>classes-rejections.jsonl</code>).</p>` +
    `<div class="grid"><table id="class-filters"><thead><tr><th>class filter</th><th class="num">dropped</th></tr></thead><tbody>${rules || '<tr><td colspan="2" class="muted">no class dropped</td></tr>'}</tbody></table>` +
    `<table id="class-funnel"><thead><tr><th>stage</th><th class="num">reached</th><th class="num">rejected there</th></tr></thead><tbody>${stages}</tbody></table></div>` +
    `<h3>Accepted class environments per split</h3><table id="class-statistics"><thead><tr><th>split</th><th class="num">classes</th><th class="num">repositories</th><th class="num">methods</th><th class="num">class lines</th><th class="num">test functions</th><th class="num">coverage</th><th class="num">methods fully covered</th><th>documentation</th></tr></thead><tbody>${splits || '<tr><td colspan="9" class="muted">none accepted</td></tr>'}</tbody></table>` +
    `<h3>Accepted (${data.accepted.length})</h3><table id="class-records"><thead><tr><th>repository</th><th>class</th><th>split</th><th class="num">methods</th><th class="num">tests</th><th class="num">coverage</th><th class="num">methods covered</th><th>documentation</th><th class="num">debug/coverage rounds</th><th>AST</th></tr></thead><tbody>${rows || '<tr><td colspan="10" class="muted">none</td></tr>'}</tbody></table>` +
    `<h3>Rejected (${data.rejected.length})</h3><table id="class-rejections"><thead><tr><th>repository</th><th>class</th><th>split</th><th>stage</th><th>reason</th></tr></thead><tbody>${rejected || '<tr><td colspan="5" class="muted">none</td></tr>'}</tbody></table>`
  );
}
