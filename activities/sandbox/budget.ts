/**
 * How long one sandbox activity may take at most with the configured limits, for its
 * startToCloseTimeout: every resolution round may wait for a full install time limit, every run
 * (the first, and one after each round) for a full run time limit plus the grace the executor
 * gives the harness, and the import scan, a container's start and the result's read need a
 * margin. Heartbeats, not this budget, catch a worker that died.
 */
import type { Config } from '../../temporal.config';
import { RUN_GRACE_SEC } from './leftovers';

/** Import scan, container starts, reading results: a generous fixed allowance. */
const ACTIVITY_MARGIN_SEC = 120;

export function sandboxActivityBudgetMs(sandbox: Pick<Config['sandbox'], 'timeoutSec'> & { packages: Pick<Config['sandbox']['packages'], 'installTimeoutSec' | 'resolutionRounds'> }): number {
  const rounds = sandbox.packages.resolutionRounds;
  const installs = rounds * sandbox.packages.installTimeoutSec;
  const runs = (rounds + 1) * (sandbox.timeoutSec + RUN_GRACE_SEC);
  return (installs + runs + ACTIVITY_MARGIN_SEC) * 1000;
}
