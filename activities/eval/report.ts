/**
 * `eval-report.html`: one self-contained page (inline SVG and CSS, no script, no network) for
 * one or more evaluation runs: Pass@k per model, Pass@1 per self-repair round, failure kinds,
 * n@k and Pr@k of the ranking methods, and per-repository results. The charts come from the
 * report module's chart library (`activities/report/charts.ts`). Every value from a summary
 * (model, repository and file names, errors, numbers) is escaped where it enters the page.
 */
import { escapeXml as escapeHtml, formatPercent as percent, groupedBarChart as barChart } from '../report/charts';
import { MODEL_FAILURE_KINDS } from './outcome';
import { RANKING_METHODS } from './ranking';
import type { EvalSummary } from './summary';

/** Every value that goes into the page goes through here, numbers included. */
const h = (v: string | number | null | undefined): string => escapeHtml(String(v ?? ''));

function runLabel(s: EvalSummary, all: readonly EvalSummary[]): string {
  const sameModel = all.filter((o) => o.model === s.model).length > 1;
  return sameModel ? `${s.model} (${s.runId.slice(-6)})` : s.model;
}

function table(head: string[], rows: (string | number)[][]): string {
  const cell = (v: string | number) => `<td>${h(v)}</td>`;
  return `<table><thead><tr>${head.map((t) => `<th>${h(t)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map(cell).join('')}</tr>`).join('')}</tbody></table>`;
}

/** What a reader must know before trusting a run's numbers: functions left out, records of the train split. */
function runNotes(s: EvalSummary, label: string): string {
  const notes: string[] = [];
  if (s.errorCount) notes.push(`${s.errorCount} of ${s.functions} function(s) could not be evaluated (first: ${s.errors[0]?.error ?? '?'})`);
  if (s.stepErrorCount) notes.push(`${s.stepErrorCount} step(s) failed for good while the rest was kept`);
  if (s.missing) notes.push(`${s.missing} function(s) have no result`);
  const harness = s.harness;
  if (harness.samples || harness.repairRounds) {
    notes.push(`the harness failed ${harness.samples} sample(s) (left out of Pass@k) and ${harness.repairRounds} repair round(s) in ${harness.functions} function(s), none counted against the model (first: ${harness.examples[0]?.summary ?? '?'})`);
  }
  if (s.task === 'eval' && s.dataset.splits.train) notes.push(`${s.dataset.splits.train} record(s) of the train split were evaluated`);
  return notes.length ? `<p class="notes">${h(label)}: ${notes.map(h).join('; ')}.</p>` : '';
}

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '–' : percent(v));

export function renderEvalReport(summaries: readonly EvalSummary[], options: { title?: string; generatedAt?: string } = {}): string {
  if (summaries.length === 0) throw new Error('a report needs at least one evaluation summary');
  const labels = summaries.map((s) => runLabel(s, summaries));
  const sections: string[] = [];

  // Pass@k per model.
  const ks = [...new Set(summaries.flatMap((s) => Object.keys(s.passAtK)))].sort((a, b) => Number(a.split('@')[1]) - Number(b.split('@')[1]));
  sections.push(
    `<section><h2>Pass@k</h2>${barChart({
      id: 'pass-at-k',
      title: 'Pass@k per model (first answers)',
      series: ks,
      groups: summaries.map((s, i) => ({ label: labels[i]!, values: ks.map((k) => s.passAtK[k] ?? null) })),
      max: 1,
      format: percent,
    })}${table(['model', 'run', 'functions', 'samples', ...ks], summaries.map((s, i) => [labels[i]!, s.runId, s.evaluated, s.samples, ...ks.map((k) => fmt(s.passAtK[k]))]))}</section>`,
  );

  // Self-repair rounds.
  const maxRounds = Math.max(...summaries.map((s) => s.passAtKByRound.length));
  if (maxRounds > 1) {
    const rounds = Array.from({ length: maxRounds }, (_, r) => r);
    sections.push(
      `<section><h2>Self-repair</h2>${barChart({
        id: 'repair-rounds',
        title: 'Pass@1 after each self-repair round',
        series: labels,
        groups: rounds.map((r) => ({ label: r === 0 ? 'initial' : `round ${r}`, values: summaries.map((s) => s.passAtKByRound[r]?.['pass@1'] ?? null) })),
        max: 1,
        format: percent,
      })}</section>`,
    );
  }

  // Failure kinds, as shares of the samples (the model's; the harness's are counted apart).
  sections.push(
    `<section><h2>Failure kinds</h2>${barChart({
      id: 'failure-kinds',
      title: 'Failing first answers by kind (share of samples)',
      series: labels,
      groups: MODEL_FAILURE_KINDS.map((k) => ({ label: k, values: summaries.map((s) => (s.samples ? s.failureKinds.initial[k] / s.samples : null)) })),
      max: 1,
      format: percent,
    })}${table(
      ['model', ...MODEL_FAILURE_KINDS, 'harness (not counted)', 'top exception types'],
      summaries.map((s, i) => [
        labels[i]!,
        ...MODEL_FAILURE_KINDS.map((k) => s.failureKinds.initial[k]),
        s.failureKinds.initial.harness,
        Object.entries(s.exceptionTypes.initial)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([t, n]) => `${t} ${n}`)
          .join(', '),
      ]),
    )}</section>`,
  );

  // The harness's own failures: what it could not do for a candidate, never the model's.
  if (summaries.some((s) => s.harness.samples + s.harness.repairRounds + s.harness.samplesWithDroppedImports > 0)) {
    sections.push(
      `<section><h2>Harness</h2><p>Failures the harness caused (a repository module the script replaces, a name the prompt shows that the script lacks, a candidate it could not place) are left out of Pass@k; imports of the repository's own modules, and of names the script defines, are left out of candidates' preambles.</p>${table(
        ['model', 'first runs failed by the harness', 'repair rounds failed by the harness', 'functions', 'samples with imports left out', 'first example'],
        summaries.map((s, i) => [labels[i]!, s.harness.samples, s.harness.repairRounds, s.harness.functions, s.harness.samplesWithDroppedImports, s.harness.examples[0] ? `${s.harness.examples[0].functionId}: ${s.harness.examples[0].summary}` : '–']),
      )}</section>`,
    );
  }

  // Ranking methods, one chart pair per run that ranked.
  summaries.forEach((s, i) => {
    if (!s.ranking) return;
    const methods = RANKING_METHODS.filter((m) => s.ranking!.methods[m]);
    const scored = (m: (typeof methods)[number]) => s.ranking!.methods[m]!;
    const hitKeys = [...new Set(methods.flatMap((m) => Object.keys(scored(m).hitAtK)))].sort((a, b) => Number(a.split('@')[1]) - Number(b.split('@')[1]));
    const prKeys = [...new Set(methods.flatMap((m) => Object.keys(scored(m).precisionAtK).filter((k) => scored(m).precisionAtK[k] !== null)))].sort((a, b) => Number(a.split('@')[1]) - Number(b.split('@')[1]));
    sections.push(
      `<section><h2>Ranking without ground truth: ${h(labels[i]!)}</h2><p>Selected method: <b>${h(s.ranking.selected)}</b>; ${h(Object.values(s.ranking.methods)[0]?.functions ?? 0)} function(s) ranked.</p>${barChart({
        id: `ranking-hit-${i}`,
        title: 'n@k: a passing candidate among the k best-ranked',
        series: [...methods],
        groups: hitKeys.map((k) => ({ label: k, values: methods.map((m) => scored(m).hitAtK[k] ?? null) })),
        max: 1,
        format: percent,
      })}${
        prKeys.length
          ? barChart({
              id: `ranking-precision-${i}`,
              title: 'Pr@k: share of the k best-ranked tests the ground truth passes',
              series: [...methods],
              groups: prKeys.map((k) => ({ label: k, values: methods.map((m) => scored(m).precisionAtK[k] ?? null) })),
              max: 1,
              format: percent,
            })
          : ''
      }</section>`,
    );
  });

  // Per repository.
  const repos = [...new Set(summaries.flatMap((s) => Object.keys(s.byRepository)))].sort();
  if (repos.length > 0) {
    sections.push(
      `<section><h2>Per repository</h2>${barChart({
        id: 'per-repository',
        title: 'Pass@1 per repository',
        series: labels,
        groups: repos.map((r) => ({ label: r, values: summaries.map((s) => s.byRepository[r]?.passAtK['pass@1'] ?? null) })),
        max: 1,
        format: percent,
        horizontal: true,
      })}${table(
        ['repository', ...summaries.flatMap((_, i) => [`${labels[i]} functions`, `${labels[i]} pass@1`])],
        repos.map((r) => [r, ...summaries.flatMap((s) => [s.byRepository[r]?.functions ?? 0, fmt(s.byRepository[r]?.passAtK['pass@1'])])]),
      )}</section>`,
    );
  }

  // Cost.
  sections.push(
    `<section><h2>Tokens and cost</h2>${table(
      ['model', 'LLM calls', 'cached', 'prompt tokens', 'completion tokens', 'estimated cost (USD)'],
      summaries.map((s, i) => [labels[i]!, s.usage.total.calls, s.usage.total.cachedCalls, s.usage.total.promptTokens, s.usage.total.completionTokens, s.usage.total.costUsd.toFixed(4)]),
    )}</section>`,
  );

  const title = options.title ?? 'Evaluation report';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${h(title)}</title>
<style>
body { font: 14px/1.4 sans-serif; margin: 24px; color: #222; background: #fafafa; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; background: #fff; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; font-size: 12px; }
th { background: #f0f0f0; }
svg.chart { background: #fff; border: 1px solid #ddd; border-radius: 4px; margin: 8px 8px 8px 0; }
</style>
</head>
<body>
<h1>${h(title)}</h1>
<p>${h(summaries.length)} run(s): ${summaries.map((s, i) => `${h(labels[i]!)} on ${h(s.dataset.file)} (${h(s.evaluated)} function(s), n=${h(s.settings.n)}, T=${h(s.settings.temperature)}, docstring: ${h(s.settings.docstring)})`).join('; ')}${options.generatedAt ? `. Generated ${h(options.generatedAt)}.` : '.'}</p>
${summaries.map((s, i) => runNotes(s, labels[i]!)).join('\n')}
${sections.join('\n')}
</body>
</html>
`;
}
