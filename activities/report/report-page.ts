/**
 * The run report as one self-contained HTML page: inline CSS, inline SVG charts (`charts.ts`)
 * and a few lines of inline script (filtering and sorting the tables). Nothing is fetched; the
 * page opens from disk. Scripts and exchanges are separate files beside it (`report/...`).
 */
import { REJECTION_STAGES, STAGE_ORDER } from '../dataset/records';
import { settingRows } from '../dataset/settings-view';
import { stagesOff } from '../dataset/stages-off';
import { SPLITS } from '../dataset/product-record';
import { solveRateBars } from '../dataset/solvability-figures';
import { REPOST_PAPER_TABLE_4, type SplitStatistics } from '../dataset/statistics';
import { TABLE_4_ROWS, formatFigure } from '../dataset/table-4';
import { PALETTE, barChart, escapeXml as esc, formatNumber, formatPercent, fractionBins, groupedBarChart, histogram, integerBins, rangeBins } from './charts';
import { renderClassSection } from './class-section';
import type { RunReportData } from './report-data';
import type { Usage } from '../store/usage';

/** Where the page links a function's files, relative to the page. */
export interface ReportLinks {
  script(functionId: string): string;
  exchanges(functionId: string): string;
}

const CSS = `
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.2em;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.muted{color:#666}.tiles{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.tile{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:120px}.tile b{display:block;font-size:1.4em}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px}
figure{margin:0}figcaption{font-weight:600;margin-bottom:4px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f6f6;position:sticky;top:0}th.sortable{cursor:pointer}td.num,th.num{text-align:right}
.reason{max-width:420px;white-space:pre-wrap;word-break:break-word}input.filter{margin:8px 0;padding:4px 8px;width:320px}
code{font-size:12px}
`;

/** Sorting by a header click and filtering by text; marks the page ready so a test can tell it ran. */
const SCRIPT = `
(function(){
  document.querySelectorAll('input.filter').forEach(function(input){
    var table=document.getElementById(input.dataset.table);
    input.addEventListener('input',function(){
      var q=input.value.toLowerCase(),shown=0;
      table.querySelectorAll('tbody tr').forEach(function(tr){var ok=tr.textContent.toLowerCase().indexOf(q)>=0;tr.hidden=!ok;if(ok)shown++;});
      var count=document.getElementById(input.dataset.table+'-count');if(count)count.textContent=shown;
    });
  });
  document.querySelectorAll('table.sortable').forEach(function(table){
    table.querySelectorAll('th').forEach(function(th,i){
      th.classList.add('sortable');
      th.addEventListener('click',function(){
        var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows),dir=th.dataset.dir==='asc'?-1:1;
        th.dataset.dir=dir===1?'asc':'desc';
        rows.sort(function(a,b){
          var x=a.cells[i].dataset.sort||a.cells[i].textContent,y=b.cells[i].dataset.sort||b.cells[i].textContent;
          var nx=parseFloat(x),ny=parseFloat(y);
          return (!isNaN(nx)&&!isNaN(ny)?nx-ny:x.localeCompare(y))*dir;
        });
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  document.body.dataset.ready='1';
})();
`;

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const usd = (x: number) => `$${x.toFixed(x < 0.01 && x > 0 ? 6 : 4)}`;
/** A cost of the run: "price unknown" (beside what was priced) when a model of the run has no price, never a bare $0. */
const costOf = (data: RunReportData, x: number) => ((data.info.unpricedModels ?? []).length === 0 ? usd(x) : x > 0 ? `${usd(x)} + price unknown` : 'price unknown');

function tile(label: string, value: string, note = ''): string {
  return `<div class="tile"><span class="muted">${esc(label)}</span><b>${esc(value)}</b>${note ? `<span class="muted">${esc(note)}</span>` : ''}</div>`;
}

function figure(caption: string, svg: string): string {
  return `<figure><figcaption>${esc(caption)}</figcaption>${svg}</figure>`;
}

function table4(data: RunReportData): string {
  const present = SPLITS.filter((s) => data.statistics.splits[s]);
  const columns = [
    ...present.map((s) => ({ head: `${s} (this run)`, stats: data.statistics.splits[s]! })),
    ...(present.length > 1 ? [{ head: 'all (this run)', stats: data.statistics.all }] : []),
    ...SPLITS.map((s) => ({ head: `RepoST ${s} (paper)`, stats: REPOST_PAPER_TABLE_4[s] })),
  ] satisfies { head: string; stats: Partial<SplitStatistics> }[];
  const rows = TABLE_4_ROWS.map(
    (row) => `<tr><td>${esc(row.label)}</td>${columns.map((c) => `<td class="num">${esc(formatFigure(c.stats[row.key], row.kind))}</td>`).join('')}</tr>`,
  );
  return (
    `<table id="table4"><thead><tr><th>figure</th>${columns.map((c) => `<th class="num">${esc(c.head)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>` +
    `<p class="muted">Tokens: ${esc(data.statistics.tokenizer)} (GPT-4o's BPE). Test cases: assert statements in the script's test functions. ` +
    `External libraries: distinct non-standard-library distributions the scripts import. The paper's columns are RepoST's published datasets, for scale.</p>`
  );
}

/** Target lengths beside RepoST's: shares of records per bin of target lines, and the averages. */
function targetLengthSection(data: RunReportData): string {
  const t = data.statistics.targetLines;
  const shares = (counts: number[]) => {
    const total = counts.reduce((a, b) => a + b, 0);
    return counts.map((c) => (total > 0 ? c / total : null));
  };
  const present = SPLITS.filter((s) => t.splits[s]);
  const series = [...present.map((s) => `this run (${s})`), `RepoST eval (published, ${t.repostEval.records})`];
  const columns = [...present.map((s) => shares(t.splits[s]!)), shares(t.repostEval.bins)];
  const chart = groupedBarChart({
    id: 'target-lines',
    title: 'Target function length: share of records per bin of lines',
    series,
    groups: t.bins.map((label, i) => ({ label, values: columns.map((c) => c[i] ?? null) })),
    format: formatPercent,
  });
  const avg = (v: number | null | undefined) => (v === null || v === undefined ? '–' : v.toFixed(1));
  const rows = [
    ...present.map((s) => `<tr><td>this run (${s})</td><td class="num">${avg(data.statistics.splits[s]?.avgTargetLines)}</td><td class="num">${formatNumber(data.statistics.splits[s]?.functions ?? 0)}</td></tr>`),
    `<tr><td>RepoST eval, published set measured here</td><td class="num">${avg(t.repostEval.average)}</td><td class="num">${formatNumber(t.repostEval.records)}</td></tr>`,
    ...SPLITS.map((s) => `<tr><td>RepoST ${s} (paper, Table 4)</td><td class="num">${avg(t.paperAverage[s])}</td><td class="num">–</td></tr>`),
  ];
  return (
    `<h3 id="target-length">Target length beside RepoST's</h3><div class="grid">${figure('Target lines', chart)}<div>` +
    `<table id="target-length-averages"><thead><tr><th>target functions</th><th class="num">average lines</th><th class="num">records</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
    `<p class="muted">Lines are physical lines of <code>orig_func</code>. RepoST's published evaluation set is measured the same way; ` +
    `its training set is not published whole, so only the paper's average stands for it. <code>--preset repost</code> selects as RepoST did.</p></div></div>`
  );
}

function funnelSection(data: RunReportData): string {
  const funnel = data.summary.funnel;
  // A stage the run had off checked nothing: every function passed it unchecked, so it is shown as off, not as reached.
  const off = new Set<string>(stagesOff(data.info.settings));
  const stages = STAGE_ORDER.filter((s) => funnel[s] !== undefined || off.has(s));
  const funnelChart = barChart({
    title: 'Functions reaching each stage',
    bars: stages.map((s) => (off.has(s) ? { label: `${s} (off)`, value: 0, color: PALETTE[7], note: 'off in this run' } : { label: s, value: funnel[s]!, color: s === 'accepted' ? PALETTE[2] : PALETTE[0] })),
  });
  const rejectedAt = data.summary.rejectedAt;
  const rejectedChart = barChart({
    title: 'Rejections by stage',
    bars: REJECTION_STAGES.filter((s) => (rejectedAt[s] ?? 0) > 0).map((s) => ({ label: s, value: rejectedAt[s]!, color: PALETTE[3] })),
  });
  // Reaching debug or coverage means passing the stages before them; how many needed a round is apart.
  const rounds = data.summary.rounds;
  const roundsTable = rounds
    ? `<table id="rounds-ran"><thead><tr><th>rounds that ran</th><th class="num">functions with a round</th><th class="num">rounds in all</th><th class="num">functions that reached the stage</th></tr></thead><tbody>` +
      (['debug', 'coverage'] as const)
        .map((k) => `<tr><td>${k}</td><td class="num">${formatNumber(rounds[k].functions)}</td><td class="num">${formatNumber(rounds[k].rounds)}</td><td class="num">${formatNumber(funnel[k] ?? 0)}</td></tr>`)
        .join('') +
      `</tbody></table><p class="muted">The funnel counts a function as reaching debug and coverage once it passed the stages before them; the rounds that ran are counted here.</p>`
    : '';
  const reasonRows = data.reasons.map(
    (g) => `<tr><td>${esc(g.stage)}</td><td>${esc(g.reasonKind)}</td><td class="num">${g.count}</td><td class="reason">${esc(g.example)}</td></tr>`,
  );
  return (
    `<h2 id="funnel">Funnel and rejections</h2><div class="grid">${figure('Funnel: functions that reached each stage', funnelChart)}${figure('Rejections by stage', rejectedChart)}</div>` +
    (off.size ? `<p class="muted" id="stages-off">Off in this run (every function passed them unchecked): ${[...off].map((s) => esc(s)).join(', ')}.</p>` : '') +
    roundsTable +
    `<h3>Rejections by stage and reason</h3><table id="reasons"><thead><tr><th>stage</th><th>reason</th><th class="num">count</th><th>example</th></tr></thead><tbody>${reasonRows.join('') || '<tr><td colspan="4" class="muted">no rejections</td></tr>'}</tbody></table>`
  );
}

function distributions(data: RunReportData): string {
  const accepted = data.records;
  const coverage = accepted.flatMap((r) => (r.coverage === null ? [] : [r.coverage]));
  const scores = accepted.flatMap((r) => (r.mutationScore === null ? [] : [r.mutationScore]));
  const lines = accepted.map((r) => r.scriptLines);
  const tests = accepted.map((r) => r.tests);
  const roundsAccepted = accepted.map((r) => r.debugRounds + r.coverageRounds);
  const roundsRejected = data.rejections.map((r) => r.rounds);
  return (
    `<h2 id="distributions">Distributions over accepted records</h2><div class="grid">` +
    figure('Branch coverage', histogram({ title: 'Branch coverage of accepted records', series: [{ name: 'records', values: coverage }], bins: fractionBins(), xLabel: 'branch coverage of the target' })) +
    (scores.length
      ? figure('Mutation score', histogram({ title: 'Mutation score of accepted records (mutants killed / run)', series: [{ name: 'records', values: scores }], bins: fractionBins(), xLabel: 'mutation score of the tests' }))
      : '') +
    figure('Eval script length', histogram({ title: 'Eval script length', series: [{ name: 'records', values: lines }], bins: rangeBins(lines), xLabel: 'lines' })) +
    figure('Tests per script', histogram({ title: 'Tests per script', series: [{ name: 'records', values: tests }], bins: integerBins(tests), xLabel: 'assert statements in test functions' })) +
    figure(
      'Rounds used',
      histogram({
        title: 'Debug plus coverage rounds used',
        series: [
          { name: 'accepted', values: roundsAccepted, color: PALETTE[2] },
          { name: 'rejected', values: roundsRejected, color: PALETTE[3] },
        ],
        bins: integerBins([...roundsAccepted, ...roundsRejected]),
        xLabel: 'debug + coverage rounds',
      }),
    ) +
    `</div>`
  );
}

/** The solvability stage: solve rates of the evaluation records it checked, and what it removed. */
function solvabilitySection(data: RunReportData): string {
  const f = data.solvability;
  if (f.checked === 0 && f.rejected === 0) return '';
  const tiles = [
    tile('records checked', formatNumber(f.checked), 'implementations from the prompt alone'),
    tile('mean solve rate', pct(f.meanSolveRate), `${f.unsolved} solved by none`),
    tile('assertions removed as unspecified', formatNumber(f.removedAssertions), `in ${f.recordsWithRemovals} record(s), of ${f.judged} judged`),
    tile('docstrings written', formatNumber(f.generatedDocstrings), 'for functions without one'),
    tile('rejected at solvability', formatNumber(f.rejected)),
  ];
  const chart = barChart({ title: 'Records by solve rate', bars: solveRateBars(f).map(({ rate, records }) => ({ label: pct(rate), value: records, color: PALETTE[2] })) });
  const removals = data.records
    .filter((r) => r.removedAssertions.length > 0)
    .flatMap((r) => r.removedAssertions.map((a) => `<tr><td><code>${esc(r.path)}::${esc(r.qualname)}</code></td><td class="num">${a.line}</td><td class="reason"><code>${esc(a.text)}</code></td></tr>`));
  return (
    `<h2 id="solvability">Solvability of evaluation records</h2><div class="tiles">${tiles.join('')}</div>` +
    `<p class="muted">A record's solve rate is the share of the implementations a model wrote from the record's prompt alone that pass its tests. ` +
    `When none passed, each failing assertion was put to a judge; those checking behaviour the prompt does not determine were removed (or rejected the record).</p>` +
    figure('Solve rates', chart) +
    `<h3>Assertions removed as unspecified</h3><table id="removed-assertions"><thead><tr><th>function</th><th class="num">line</th><th>assertion</th></tr></thead>` +
    `<tbody>${removals.join('') || '<tr><td colspan="3" class="muted">none</td></tr>'}</tbody></table>`
  );
}

function costSection(data: RunReportData): string {
  const usage = data.usage;
  if (!usage) return `<h2 id="cost">LLM cost</h2><p class="muted">The run's summary has no LLM usage.</p>`;
  const per = data.statistics.perAcceptedExample;
  const byStep = Object.entries(data.summary.llm?.byStep ?? {});
  const noPrice = usage.costUsd === 0 && usage.promptTokens + usage.completionTokens > 0;
  const unpriced = data.info.unpricedModels ?? [];
  const tiles = [
    tile('LLM calls', formatNumber(usage.calls), `${usage.cachedCalls} from the cache`),
    tile(
      'tokens',
      formatNumber(usage.promptTokens + usage.completionTokens),
      `${formatNumber(usage.promptTokens)} prompt (${formatNumber(usage.cachedPromptTokens ?? 0)} from the endpoint's prompt cache) + ${formatNumber(usage.completionTokens)} completion`,
    ),
    tile('estimated cost', costOf(data, usage.costUsd), unpriced.length ? `no price in llm.prices for ${unpriced.join(', ')}` : noPrice ? 'the model has no price in llm.prices' : ''),
    tile('per accepted example', per ? costOf(data, per.costUsd) : '–', per ? `${formatNumber(per.tokens)} tokens, ${formatNumber(per.calls)} calls` : 'no accepted record'),
  ];
  const modes = data.summary.llm?.byMode;
  if (modes && modes.batch.calls > 0) {
    const part = (u: Usage) => `${formatNumber(u.promptTokens + u.completionTokens)} tokens, ${costOf(data, u.costUsd)}`;
    tiles.splice(2, 0, tile('live calls', formatNumber(modes.live.calls), part(modes.live)), tile('batch answers', formatNumber(modes.batch.calls), `${part(modes.batch)} (batch prices)`));
  }
  const tokensChart = barChart({ title: 'Tokens by step', bars: byStep.map(([step, u], i) => ({ label: step, value: u.promptTokens + u.completionTokens, color: PALETTE[i % PALETTE.length], note: `${u.calls} calls` })) });
  const costChart = barChart({ title: 'Estimated cost by step', bars: byStep.filter(([, u]) => u.costUsd > 0).map(([step, u]) => ({ label: step, value: u.costUsd })), format: usd });
  return (
    `<h2 id="cost">LLM cost</h2><div class="tiles">${tiles.join('')}</div>` +
    `<p class="muted">Per accepted example: the whole run's spend (rejected functions included) divided by its accepted records.</p>` +
    `<div class="grid">${figure('Tokens by step', tokensChart)}${figure('Estimated cost by step', costChart)}</div>`
  );
}

/** What refused answers (regenerations) cost, by the check that refused them and by step. */
function regenerationsSection(data: RunReportData): string {
  const r = data.summary.regenerations;
  const head = `<h2 id="regenerations">Refused answers (regenerations)</h2>`;
  if (!r) return `${head}<p class="muted">The run's summary does not count refused answers.</p>`;
  const tokens = (f: { promptTokens: number; completionTokens: number }) => f.promptTokens + f.completionTokens;
  const rate = r.reviewed > 0 ? r.calls / r.reviewed : null;
  const share = data.usage && tokens(data.usage) > 0 ? tokens(r) / tokens(data.usage) : null;
  const tiles = [
    tile('refused answers', formatNumber(r.calls), `of ${formatNumber(r.reviewed)} reviewed (${pct(rate)})`),
    tile('their tokens', formatNumber(tokens(r)), share === null ? '' : `${pct(share)} of the run's tokens`),
    tile('their estimated cost', costOf(data, r.costUsd)),
  ];
  const checks = Object.entries(r.byCheck).sort(([a, x], [b, y]) => y.calls - x.calls || a.localeCompare(b));
  const checkRows = checks.map(
    ([check, f]) => `<tr><td><code>${esc(check)}</code></td><td class="num">${formatNumber(f.calls)}</td><td class="num">${formatNumber(tokens(f))}</td><td class="num">${esc(costOf(data, f.costUsd))}</td></tr>`,
  );
  const steps = Object.entries(r.byStep).sort(([a], [b]) => a.localeCompare(b));
  const stepRows = steps.map(
    ([step, f]) =>
      `<tr><td>${esc(step)}</td><td class="num">${formatNumber(f.calls)} / ${formatNumber(f.reviewed)}</td><td class="num">${pct(f.reviewed > 0 ? f.calls / f.reviewed : null)}</td>` +
      `<td class="num">${formatNumber(tokens(f))}</td><td class="num">${esc(costOf(data, f.costUsd))}</td></tr>`,
  );
  const chart = barChart({ title: 'Refused answers by check', bars: checks.map(([check, f]) => ({ label: check, value: f.calls, color: PALETTE[3], note: `${formatNumber(tokens(f))} tokens` })) });
  return (
    `${head}<div class="tiles">${tiles.join('')}</div>` +
    `<p class="muted">An answer that does not parse or fails a sanity check is asked again (or ends its step); its tokens are spent all the same. ` +
    `A call refused by several checks counts under each of them, and once in the totals.</p>` +
    `<div class="grid">${figure('Refused answers by check', chart)}<div>` +
    `<table id="regenerations-by-check"><thead><tr><th>check</th><th class="num">refused calls</th><th class="num">tokens</th><th class="num">cost</th></tr></thead>` +
    `<tbody>${checkRows.join('') || '<tr><td colspan="4" class="muted">no answer was refused</td></tr>'}</tbody></table>` +
    `<h3>By step</h3><table id="regenerations-by-step"><thead><tr><th>step</th><th class="num">refused / reviewed</th><th class="num">rate</th><th class="num">tokens</th><th class="num">cost</th></tr></thead>` +
    `<tbody>${stepRows.join('') || '<tr><td colspan="5" class="muted">no answer was reviewed</td></tr>'}</tbody></table></div></div>`
  );
}

function packagesSection(data: RunReportData): string {
  const libs = Object.entries(data.statistics.libraries).slice(0, 25);
  const chart = barChart({ title: 'External libraries imported by the eval scripts', bars: libs.map(([name, n]) => ({ label: name, value: n })) });
  const rows = data.installed.map((p) => `<tr><td>${esc(p.name)}</td><td>${esc(p.versions.join(', '))}</td><td class="num">${p.records}</td></tr>`);
  return (
    `<h2 id="packages">Packages</h2>${figure(`External libraries (${Object.keys(data.statistics.libraries).length} distinct; records importing each, top 25)`, chart)}` +
    `<h3>Installed in the sandbox (with their dependencies)</h3><table id="installed" class="sortable"><thead><tr><th>distribution</th><th>versions</th><th class="num">records</th></tr></thead>` +
    `<tbody>${rows.join('') || '<tr><td colspan="3" class="muted">no record needed a package installed</td></tr>'}</tbody></table>`
  );
}

function recordsTable(data: RunReportData, links: ReportLinks): string {
  const rows = data.records.map((r) => {
    const check = r.astEqual ? 'AST equal' : r.functionality ? `LLM: ${r.functionality}` : '–';
    return (
      `<tr><td><code>${esc(r.repo)}</code></td><td><code>${esc(r.path)}::${esc(r.qualname)}</code></td><td>${esc(r.split)}</td>` +
      `<td class="num" data-sort="${r.coverage ?? -1}">${pct(r.coverage)}</td>` +
      `<td class="num" data-sort="${r.mutationScore ?? -1}">${pct(r.mutationScore)}${r.stability === 'flaky' ? ' (flaky)' : ''}</td><td class="num">${r.tests}</td><td class="num">${r.scriptLines}</td>` +
      `<td class="num">${r.debugRounds}/${r.coverageRounds}</td><td>${esc(check)}</td><td class="num" data-sort="${r.solveRate ?? -1}">${pct(r.solveRate)}</td><td class="num">${formatNumber(r.llmTokens)}</td>` +
      `<td>${esc(r.libraries.join(', '))}</td>` +
      `<td><a href="${esc(links.script(r.functionId))}">script</a> · <a href="${esc(links.exchanges(r.functionId))}">${r.exchanges} exchange${r.exchanges === 1 ? '' : 's'}</a></td></tr>`
    );
  });
  return (
    `<h2 id="records">Accepted records (<span id="records-table-count">${data.records.length}</span>)</h2>` +
    `<input class="filter" data-table="records-table" placeholder="filter records">` +
    `<table id="records-table" class="sortable"><thead><tr><th>repository</th><th>function</th><th>split</th><th class="num">coverage</th><th class="num">mutation score</th><th class="num">tests</th><th class="num">script lines</th>` +
    `<th class="num">debug/cov. rounds</th><th>equivalence</th><th class="num">solve rate</th><th class="num">LLM tokens</th><th>libraries</th><th>files</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

function rejectionsTable(data: RunReportData, links: ReportLinks): string {
  const rows = data.rejections.map(
    (r) =>
      `<tr><td><code>${esc(r.repo)}</code></td><td><code>${esc(r.path)}::${esc(r.qualname)}</code></td><td>${esc(r.stage)}</td><td class="reason">${esc(r.reason)}</td>` +
      `<td class="num">${r.rounds}</td><td class="num">${formatNumber(r.llmTokens)}</td><td><a href="${esc(links.exchanges(r.functionId))}">${r.exchanges} exchange${r.exchanges === 1 ? '' : 's'}</a></td></tr>`,
  );
  return (
    `<h2 id="rejections">Rejected functions (<span id="rejections-table-count">${data.rejections.length}</span>)</h2>` +
    `<input class="filter" data-table="rejections-table" placeholder="filter rejections">` +
    `<table id="rejections-table" class="sortable"><thead><tr><th>repository</th><th>function</th><th>stage</th><th>reason</th><th class="num">rounds</th><th class="num">LLM tokens</th><th>files</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

function settingsBlock(data: RunReportData): string {
  const rows = settingRows(data.info.settings).map(([k, v]) => `<tr><td><code>${esc(k)}</code></td><td><code>${esc(v)}</code></td></tr>`);
  const model = data.info.model ? `model <code>${esc(data.info.model)}</code>` : 'model not recorded';
  const skipped = data.summary.skippedRepos.map((s) => `<li><code>${esc(JSON.stringify(s.source))}</code>: ${esc(s.reason)}</li>`).join('');
  return (
    `<p class="muted">${data.info.sources.length} source(s) · ${model}</p>` +
    (rows.length ? `<details open><summary>Settings (${rows.length})</summary><table id="settings"><thead><tr><th>setting</th><th>value</th></tr></thead><tbody>${rows.join('')}</tbody></table></details>` : '<p class="muted">Settings not recorded.</p>') +
    (skipped ? `<details><summary>${data.summary.skippedRepos.length} repositor${data.summary.skippedRepos.length === 1 ? 'y' : 'ies'} skipped</summary><ul>${skipped}</ul></details>` : '')
  );
}

export function renderRunReport(data: RunReportData, links: ReportLinks): string {
  const s = data.summary;
  const rate = s.functions > 0 ? s.accepted / s.functions : null;
  const tiles = [
    tile('repositories', formatNumber(s.repositories), s.skippedRepos.length ? `${s.skippedRepos.length} skipped` : ''),
    tile('functions', formatNumber(s.functions)),
    tile('accepted', formatNumber(s.accepted), rate === null ? '' : `${pct(rate)} of functions`),
    tile('rejected', formatNumber(s.rejected)),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Run ${esc(data.runId)}</title><style>${CSS}</style></head>
<body>
<h1>Run <code>${esc(data.runId)}</code></h1>
<p class="muted">Report generated ${esc(data.generatedAt)}.</p>
${settingsBlock(data)}
<div class="tiles">${tiles.join('')}</div>
${funnelSection(data)}
<h2 id="statistics">Dataset statistics (RepoST Table 4)</h2>
${table4(data)}
${targetLengthSection(data)}
${distributions(data)}
${solvabilitySection(data)}
${costSection(data)}
${regenerationsSection(data)}
${packagesSection(data)}
${recordsTable(data, links)}
${rejectionsTable(data, links)}
${renderClassSection(data.classes)}
<script>${SCRIPT}</script>
</body></html>
`;
}
