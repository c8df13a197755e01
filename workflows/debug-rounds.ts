/**
 * Debug rounds: while the script fails with the ground truth as its new implementation, up to k
 * times, the model is shown the script and its error and asked for a fixed one, which is run
 * again and taken up.
 */
import type { PreviousAnswer } from '../activities/contracts';
import type { Pipeline, Rejection } from './pipeline';
import { scriptOf } from './pipeline';
import { PIPELINE_PRIORITY as P } from './priorities';

export async function debugRounds(p: Pipeline): Promise<Rejection | null> {
  const { run, fn, state } = p;
  let previous: PreviousAnswer | undefined;
  while (p.exec.status !== 'passed' && state.debugRounds < p.settings.debugRounds) {
    const round = ++state.debugRounds;
    p.enter('debug', `round ${round}: ${p.exec.summary.slice(0, 200)}`);
    const fixed = await p.llm(P.debug).debugScript({ run, fn, prepared: p.prepared, scriptKey: p.script.key, resultKey: p.exec.resultKey, round, previous });
    previous = p.answered(fixed, 'debug');
    if (!fixed.ok) continue;
    const script = scriptOf(fixed);
    p.adopt({ ...script, exec: await p.execute(P.debug, script) });
  }
  if (p.exec.status === 'passed') return null;
  const rounds = state.debugRounds;
  return { stage: rounds > 0 ? 'debug' : 'execute', reason: `${p.exec.status} after ${rounds} debug round(s): ${p.exec.summary}` };
}
