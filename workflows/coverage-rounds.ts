/**
 * Coverage rounds: while the script's coverage of the target is below the split's threshold, the
 * model is shown what is not covered and asked for tests of it; a new script is taken up only if
 * it passes and covers more.
 */
import type { PreviousAnswer } from '../activities/contracts';
import { coverageOf, scriptOf, type Pipeline, type Rejection } from './pipeline';
import { PIPELINE_PRIORITY as P } from './priorities';

export async function coverageRounds(p: Pipeline): Promise<Rejection | null> {
  const { run, fn, state } = p;
  const threshold = p.thresholds.coverage;
  let previous: PreviousAnswer | undefined;
  while (coverageOf(p.exec) < threshold && state.coverageRounds < p.settings.coverageRounds) {
    const round = ++state.coverageRounds;
    p.enter('coverage', `round ${round}: coverage ${coverageOf(p.exec).toFixed(3)} < ${threshold}`);
    const improved = await p.llm(P.coverage).improveCoverage({ run, fn, prepared: p.prepared, scriptKey: p.script.key, resultKey: p.exec.resultKey, round, previous });
    previous = p.answered(improved, 'coverage');
    if (!improved.ok) continue;
    const script = scriptOf(improved);
    const next = await p.execute(P.coverage, script);
    if (next.status === 'passed' && coverageOf(next) > coverageOf(p.exec)) p.adopt({ ...script, exec: next });
  }
  const reached = coverageOf(p.exec);
  if (reached >= threshold) return null;
  return { stage: 'coverage', reason: `coverage ${reached.toFixed(3)} below ${threshold} after ${state.coverageRounds} round(s)` };
}
