/**
 * `start.ts --estimate`: the crawl's expected LLM calls, tokens and cost, printed before any call
 * and without Temporal or workers. The targets are what the crawl would select from each local
 * folder (the same analysis, filters and seeded sample); a repository on GitHub is not fetched for
 * an estimate, so it is listed as not estimated. A resumed run's own calls so far (read from the
 * store) replace the measured averages.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { chooseCandidates, RepositoryAnalyzer, selectClassCandidates } from '../../activities/analysis';
import type { RepoSource } from '../../activities/contracts';
import { averagesFromExchanges, estimateRun, formatEstimate, type EstimateTarget, type RecordedCall, type RunEstimate } from '../../activities/llm/estimate';
import { formatCostUsd } from '../../activities/llm/prices';
import { classKind, functionKind } from '../../activities/targets';
import { estimateTokens } from '../../activities/llm/tokens';
import type { Store } from '../../activities/store/types';
import type { Config } from '../../temporal.config';

export interface CrawlEstimate {
  estimate: RunEstimate;
  /** Sources that were not analysed (GitHub repositories), with why. */
  notEstimated: string[];
}

function contentKey(kind: string, qualname: string, context: string): string {
  return createHash('sha256').update(`${kind}\0${qualname}\0${context}`).digest('hex');
}

/** The targets a crawl of `sources` would select, as the estimate sees them. */
export async function estimateTargets(config: Config, sources: readonly RepoSource[]): Promise<{ targets: EstimateTarget[]; notEstimated: string[] }> {
  const targets: EstimateTarget[] = [];
  const notEstimated: string[] = [];
  const kinds = config.crawl.targets;
  for (const source of sources) {
    if (source.kind !== 'local') {
      notEstimated.push(`${source.fullName}: a GitHub repository is not fetched for an estimate`);
      continue;
    }
    const split = source.split ?? 'train';
    const analyzer = await RepositoryAnalyzer.open(source.path, {
      ...config.analysis,
      repoId: source.name ?? path.basename(path.resolve(source.path)),
      split,
      contextTokenBudget: config.analysis.contextTokenBudget[split],
    });
    if (kinds !== 'classes') {
      const chosen = chooseCandidates(analyzer.functions(), { preset: config.analysis.preset, split, max: config.crawl.maxFunctionsPerRepo, seed: config.crawl.seed });
      for (const f of chosen) {
        const a = analyzer.analyze(f.path, f.qualname);
        const crossFile = a.dependencies.some((d) => d.path !== f.path);
        targets.push({ kind: 'function', steps: functionKind.llmSteps, crossFile, split, contextTokens: estimateTokens(a.context), contentKey: contentKey('function', f.qualname, a.context) });
      }
    }
    if (kinds !== 'functions') {
      for (const c of selectClassCandidates(analyzer.classCandidates(), config.crawl.maxClassesPerRepo, config.crawl.seed)) {
        const a = analyzer.analyzeClass(c.info.path, c.info.qualname, c.info.occurrence);
        const crossFile = a.dependencies.some((d) => d.path !== c.info.path);
        targets.push({ kind: 'class', steps: classKind.llmSteps, crossFile, split, contextTokens: estimateTokens(a.context), contentKey: contentKey('class', c.info.qualname, a.context) });
      }
    }
  }
  return { targets, notEstimated };
}

/** The estimate of a crawl; with `resumedRun`, the averages are that run's own calls so far. */
export async function estimateCrawl(config: Config, sources: readonly RepoSource[], resumedRun?: { store: Store; runId: string }): Promise<CrawlEstimate> {
  const { targets, notEstimated } = await estimateTargets(config, sources);
  let own: ReturnType<typeof averagesFromExchanges> | undefined;
  if (resumedRun) {
    const calls: RecordedCall[] = [];
    for await (const e of resumedRun.store.listRunExchanges(resumedRun.runId)) {
      if (!e.cached) calls.push({ step: e.step, functionId: e.functionId, promptTokens: e.promptTokens, completionTokens: e.completionTokens });
    }
    const mean = targets.length ? targets.reduce((n, t) => n + t.contextTokens, 0) / targets.length : 0;
    own = averagesFromExchanges(calls, mean);
  }
  return { estimate: estimateRun(targets, config, own), notEstimated };
}

export function formatCrawlEstimate(e: CrawlEstimate): string {
  const out = [formatEstimate(e.estimate, (usd) => formatCostUsd(usd, e.estimate.unpriced, 4))];
  for (const n of e.notEstimated) out.push(`not estimated: ${n}`);
  out.push('Rough figures (four characters a token; calls per target and answer sizes from the averages named above), before any call.');
  return out.join('\n');
}
