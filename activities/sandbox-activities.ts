/**
 * Container activities (task queue `sandbox`): run an evaluation script with the ground truth
 * copied in as `<name>_new_implementation`, compare the sandboxed function's AST with the
 * original's (for a class target, the whole class is copied in and compared), score the script's
 * tests against mutants of the target, and run it several times to see whether its verdict is
 * stable. They heartbeat while the container runs and honour cancellation.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import type { ExecutionSummary, FunctionRef, MutationScore, PreparedFunction } from './contracts';
import { activityHooks, RunConfigs } from './run-context';
import { newImplementationName, runLimitsOf, summaryLine, type RunRequest, type SandboxExecutor, type SandboxResult } from './sandbox';
import { testMutants, type MutationSummary } from './sandbox/mutation';
import { checkStability } from './sandbox/stability';
import type { Store } from './store/types';
import { kindOf } from './targets';
import type { SandboxActivities } from './types';

export interface SandboxDependencies {
  config: Config;
  store: Store;
  executor: SandboxExecutor;
}

/** Not the script's fault: Temporal retries the activity. */
function infrastructureFailure(what: string): ApplicationFailure {
  return ApplicationFailure.retryable(`sandbox infrastructure failure: ${what}`, 'SandboxInfrastructure');
}

/** One line of a mutation score, for histories and rejections. */
export function mutationLine(m: MutationSummary): string {
  if (m.status === 'ground_truth_failed') return `no score: the script fails with its ground truth (${m.groundTruth})`;
  if (m.status === 'no_mutants') return `no score: the target gave no mutant${m.notes.length ? ` (${m.notes.join('; ').slice(0, 200)})` : ''}`;
  const notRun = m.notRun ? `, ${m.notRun} not run` : '';
  const leftOut = Object.entries(m.leftOut ?? {}).filter(([, n]) => n > 0);
  const unseen = leftOut.length ? `; left out as no allowed test can see them: ${leftOut.map(([reason, n]) => `${n} ${reason}`).join(', ')}` : '';
  return `mutation score ${m.score!.toFixed(3)}: ${m.killed} of ${m.killed + m.survived} mutants killed (${m.timedOut} by a timeout), ${m.survived} survived${notRun}${unseen}`;
}

export function createSandboxActivities({ config, store, executor }: SandboxDependencies): SandboxActivities {
  const runs = new RunConfigs(config, store);

  /** The run of a script with the ground truth in place, as every ground-truth run of the pipeline makes it. */
  async function groundTruthRun(run: Parameters<RunConfigs['forRun']>[0], fn: FunctionRef, prepared: PreparedFunction, scriptKey: string, installs: string[]) {
    const runConfig = await runs.forRun(run);
    const script = await store.get(scriptKey);
    const original = await store.get(prepared.sourceKey);
    const request: Omit<RunRequest, 'script'> = {
      install: true,
      requirements: installs,
      localModules: prepared.localModules,
      packagesAsOf: packagesAsOf(fn, runConfig),
      timeoutSec: runConfig.sandbox.timeoutSec,
      limits: runLimitsOf(runConfig.sandbox),
    };
    return { runConfig, script, original, request };
  }

  /** The releases of the code's own time (the run's grace period): see as-of.ts. */
  function packagesAsOf(fn: FunctionRef, runConfig: Config) {
    return fn.commitDate ? { date: fn.commitDate, graceSec: runConfig.sandbox.packages.asOfGraceSec } : undefined;
  }

  /** The script with the ground truth copied in as `<name>_new_implementation` (the whole class for a class target). */
  function withGroundTruth(fn: FunctionRef, script: string, original: string): string {
    return kindOf(fn).withGroundTruth(script, original, fn.qualname);
  }

  return {
    async executeScript({ run, fn, prepared, scriptKey, coverage, installs }): Promise<ExecutionSummary> {
      const runConfig = await runs.forRun(run);
      const script = await store.get(scriptKey);
      const original = await store.get(prepared.sourceKey);
      let withTruth: string | null = null;
      let insertError = '';
      try {
        withTruth = withGroundTruth(fn, script, original);
      } catch (err) {
        insertError = (err as Error).message;
      }
      const result: SandboxResult =
        withTruth === null
          ? // The script's shape does not allow the copy (e.g. the class is missing): a failed run.
            {
              status: 'error', exitCode: null, durationMs: 0, stdout: '', truncated: false, coverage: null, packages: [], requirements: [], notes: [],
              stderr: `cannot insert the ground truth as ${newImplementationName(fn.qualname)}: ${insertError}`,
              exception: null,
            }
          : await executor.run(
              {
                script: withTruth,
                install: true,
                requirements: installs,
                localModules: prepared.localModules,
                packagesAsOf: packagesAsOf(fn, runConfig),
                timeoutSec: runConfig.sandbox.timeoutSec,
                limits: runLimitsOf(runConfig.sandbox),
                coverage: coverage ? { functionName: newImplementationName(fn.qualname) } : undefined,
              },
              activityHooks(),
            );
      // Not the script's fault: let Temporal retry the activity.
      if (result.status === 'infrastructure') throw infrastructureFailure(summaryLine(result));
      const c = result.coverage;
      return {
        status: result.status,
        exitCode: result.exitCode,
        durationMs: result.durationMs,
        resultKey: await store.putJson(result),
        summary: summaryLine(result),
        coverage: c
          ? {
              branchCoverage: c.branches.rate,
              lineCoverage: c.lines.rate,
              hasBranches: c.hasBranches,
              missingLines: c.missingLines.length,
              missingBranches: c.missingBranches.length,
            }
          : null,
        packages: result.packages,
      };
    },

    async scoreMutants({ run, fn, prepared, scriptKey, installs, sample }): Promise<MutationScore> {
      const { runConfig, script, original, request } = await groundTruthRun(run, fn, prepared, scriptKey, installs);
      // An activity scheduled before the workflow passed the sample (a retry or resume of an older
      // history) gets it where it came from then: the run's frozen configuration.
      const { cap, seed } = sample ?? runConfig.loops.mutation;
      const outcome = await testMutants(
        executor,
        { script, originalFunction: original, functionName: fn.qualname, kind: kindOf(fn).mutationTarget, ...request },
        { cap, seed },
        activityHooks(),
      );
      if (outcome.result.status === 'infrastructure') throw infrastructureFailure(summaryLine(outcome.result));
      const m = outcome.summary;
      return {
        status: m.status,
        score: m.score,
        made: m.made,
        killed: m.killed,
        survived: m.survived,
        timedOut: m.timedOut,
        notRun: m.notRun,
        leftOut: m.leftOut,
        survivorsKey: await store.put(outcome.survivorsText),
        summary: mutationLine(m),
      };
    },

    async checkStability({ run, fn, prepared, scriptKey, installs, runs: count }) {
      const { script, original, request } = await groundTruthRun(run, fn, prepared, scriptKey, installs);
      const result = await checkStability(
        executor,
        { ...request, script: withGroundTruth(fn, script, original), coverage: { functionName: newImplementationName(fn.qualname) } },
        count,
        activityHooks(),
      );
      // A run the sandbox itself failed says nothing about the script.
      if (result.verdict === 'inconclusive') throw infrastructureFailure(result.reason ?? 'a stability run failed in the sandbox');
      return { verdict: result.verdict, reason: result.reason?.slice(0, 2000) ?? null, runs: count };
    },

    async astCheck({ run, fn, prepared, scriptKey }) {
      await runs.forRun(run);
      const script = await store.get(scriptKey);
      const kind = kindOf(fn);
      const sandboxed = kind.definitionSource(script, fn.qualname);
      if (!sandboxed) return { equivalent: false, difference: `the script defines no ${kind.definitionName(fn.qualname)}` };
      const cmp = await executor.astEquivalent(await store.get(prepared.sourceKey), sandboxed);
      return { equivalent: cmp.equivalent, difference: cmp.difference };
    },
  };
}
