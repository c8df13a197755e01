/**
 * Test strength, when the run's settings ask for it (`loops.stability`, `loops.mutation`).
 * Stability: the script run with the ground truth several times (another hash seed, run folder and
 * clock each time); a verdict that differs is flaky: rejected, or kept and labelled.
 * Mutation: the tests scored against mutants of the target, then mutation rounds: the model asked
 * for tests that kill the surviving mutants; a new script is taken up only if it passes with the
 * ground truth at the coverage reached, is stable and kills more. Then the minimum decides
 * (docs/architecture.md, invariant 13).
 */
import type { PreviousAnswer, StabilityVerdict } from '../activities/contracts';
import { belowMinScore, coverageOf, scriptOf, type Pipeline, type Rejection } from './pipeline';
import { PIPELINE_PRIORITY as P } from './priorities';

/** Stability runs for the function's split (0: off). */
function stabilityRuns(p: Pipeline): number {
  return p.settings.stability?.runs[p.fn.split] ?? 0;
}

/** The script's verdict over the configured number of runs. */
function stabilityOf(p: Pipeline, script: { key: string; installs: string[] }): Promise<StabilityVerdict> {
  const runs = stabilityRuns(p);
  return p.sandbox(P.strength).checkStability({ run: p.run, fn: p.fn, prepared: p.prepared, scriptKey: script.key, installs: script.installs, runs });
}

export async function stabilityCheck(p: Pipeline): Promise<Rejection | null> {
  const runs = stabilityRuns(p);
  if (runs <= 0) return null;
  p.enter('stability', `running the script ${runs} times`);
  const verdict = (p.state.stability = await stabilityOf(p, p.script));
  if (verdict.verdict === 'flaky' && !p.settings.stability!.keepFlaky) return { stage: 'stability', reason: `flaky: ${verdict.reason}` };
  return null;
}

export async function mutationRounds(p: Pipeline): Promise<Rejection | null> {
  const { run, fn, state } = p;
  const minScore = p.thresholds.mutationScore ?? null;
  if (minScore === null) return null;
  p.enter('mutation', 'scoring the tests against mutants of the target');
  const { cap, seed } = p.settings.mutation!;
  const score = (script: { key: string; installs: string[] }) => p.sandbox(P.strength).scoreMutants({ run, fn, prepared: p.prepared, scriptKey: script.key, installs: script.installs, sample: { cap, seed } });
  const first = (state.mutation = await score(p.script));
  let previous: PreviousAnswer | undefined;
  while (belowMinScore(state.mutation, minScore) && state.mutationRounds < p.settings.mutation!.rounds) {
    const current = state.mutation;
    const round = ++state.mutationRounds;
    p.progress('mutation', `round ${round}: ${current.summary} < ${minScore}`);
    const sharper = await p.llm(P.strength).killMutants({ run, fn, prepared: p.prepared, scriptKey: p.script.key, survivorsKey: current.survivorsKey, score: current.score!, round, previous });
    previous = p.answered(sharper, 'mutation');
    if (!sharper.ok) continue;
    const script = scriptOf(sharper);
    const next = await p.execute(P.strength, script);
    if (next.status !== 'passed' || coverageOf(next) < p.thresholds.coverage) continue;
    const stability = stabilityRuns(p) > 0 ? await stabilityOf(p, script) : null;
    if (stability?.verdict === 'flaky') continue;
    const nextScore = await score(script);
    if (nextScore.status === 'scored' && nextScore.killed > current.killed) {
      p.adopt({ ...script, exec: next });
      state.mutation = nextScore;
      state.stability = stability ?? state.stability;
    }
  }
  if (!belowMinScore(state.mutation, minScore)) return null;
  const before = state.mutationRounds > 0 ? ` (${first.score!.toFixed(3)} before them)` : '';
  return { stage: 'mutation', reason: `${state.mutation.summary}; below ${minScore} after ${state.mutationRounds} mutation round(s)${before}` };
}
