/**
 * Container activities (task queue `sandbox`): run an evaluation script with the ground truth
 * copied in as `<name>_new_implementation`, and compare the sandboxed function's AST with the
 * original's; for a class target, the whole class is copied in and compared. They heartbeat
 * while the container runs and honour cancellation.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import type { ExecutionSummary } from './contracts';
import { classDefinitionSource, definitionSource } from './dataset/script-parts';
import { activityHooks, RunConfigs } from './run-context';
import { newImplementationName, runLimitsOf, summaryLine, withNewClassImplementation, withNewImplementation, type SandboxExecutor, type SandboxResult } from './sandbox';
import type { Store } from './store/types';
import type { SandboxActivities } from './types';

export interface SandboxDependencies {
  config: Config;
  store: Store;
  executor: SandboxExecutor;
}

export function createSandboxActivities({ config, store, executor }: SandboxDependencies): SandboxActivities {
  const runs = new RunConfigs(config, store);
  return {
    async executeScript({ run, fn, prepared, scriptKey, coverage, installs }): Promise<ExecutionSummary> {
      const runConfig = await runs.forRun(run);
      const script = await store.get(scriptKey);
      const original = await store.get(prepared.sourceKey);
      let withTruth: string | null = null;
      let insertError = '';
      try {
        withTruth = fn.kind === 'class' ? withNewClassImplementation(script, original, fn.qualname) : withNewImplementation(script, original, fn.qualname);
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
                // The releases of the code's own time (the run's grace period): see as-of.ts.
                packagesAsOf: fn.commitDate ? { date: fn.commitDate, graceSec: runConfig.sandbox.packages.asOfGraceSec } : undefined,
                timeoutSec: runConfig.sandbox.timeoutSec,
                limits: runLimitsOf(runConfig.sandbox),
                coverage: coverage ? { functionName: newImplementationName(fn.qualname) } : undefined,
              },
              activityHooks(),
            );
      if (result.status === 'infrastructure') {
        // Not the script's fault: let Temporal retry the activity.
        throw ApplicationFailure.retryable(`sandbox infrastructure failure: ${summaryLine(result)}`, 'SandboxInfrastructure');
      }
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

    async astCheck({ run, fn, prepared, scriptKey }) {
      await runs.forRun(run);
      const script = await store.get(scriptKey);
      const sandboxed = fn.kind === 'class' ? classDefinitionSource(script, fn.qualname) : definitionSource(script, fn.qualname);
      if (!sandboxed) return { equivalent: false, difference: `the script defines no ${fn.kind === 'class' ? 'top-level class ' : ''}${fn.qualname}` };
      const cmp = await executor.astEquivalent(await store.get(prepared.sourceKey), sandboxed);
      return { equivalent: cmp.equivalent, difference: cmp.difference };
    },
  };
}
