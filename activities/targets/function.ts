/**
 * The function kind (RepoST's target): a function or method, its local-dependency context, the
 * function prompts and sanity checks, the function copied in as `<name>_new_implementation`, its
 * record a `dataset.jsonl` line in RepoST's format plus this factory's fields.
 */
import { finalResult, rejectionOf, sharedRecordFields, solvabilityFields, textOf } from '../dataset/records';
import { dedentDefinition } from '../dataset/dedent-definition';
import { definitionSource } from '../dataset/script-parts';
import { checkSandboxScript, checkTestScript } from '../llm/sanity';
import { withNewImplementation } from '../sandbox/new-implementation';
import { topLevelModules } from '../sources/modules';
import { DatasetRecordSchema, type DatasetRecord } from '../store/records';
import { targetRef, type TargetKindModule } from './kind';

export const functionKind: TargetKindModule = {
  kind: 'function',
  noun: 'function',

  ref: targetRef,

  async prepare(analyzer, fn, store) {
    const a = analyzer.analyze(fn.path, fn.qualname, fn.occurrence ?? 0);
    return {
      ok: true,
      prepared: {
        sourceKey: await store.put(a.source),
        contextKey: await store.put(a.context),
        crossFile: a.dependencies.some((d) => d.path !== fn.path),
        standalone: a.standalone,
        dependencyCount: a.dependencies.length,
        unsupplied: a.unsupplied,
        localModules: topLevelModules(analyzer.repo.modules.keys()),
      },
    };
  },

  // RepoST's two sandbox prompts: the target file alone, or with dependencies from other files.
  sandboxPrompt: (_fn, prepared, vars) => ({ kind: prepared.crossFile ? 'aggregate' : 'sandbox', vars }),
  testsPrompt: (vars) => ({ kind: 'tests', vars }),
  debugPrompt: (vars) => ({ kind: 'debug', vars }),
  coveragePrompt: (vars) => ({ kind: 'coverage', vars }),
  checkFunctionalityPrompt: (fn, original, script) => ({
    kind: 'check_functionality',
    vars: { originalFunction: original, sandboxedFunction: definitionSource(script, fn.qualname) ?? script, functionName: fn.name },
  }),
  checkTestsPrompt: (vars) => ({ kind: 'check_tests', vars }),
  llmSteps: {
    sandbox: 'ownFile',
    aggregate: 'crossFile',
    tests: 'each',
    check_functionality: 'each',
    check_tests: 'each',
    debug: 'debugRounds',
    coverage: 'coverageRounds',
    mutation: 'mutationRounds',
    // The evaluation split's solvability stage (functions only).
    solve: 'solvabilitySamples',
    docstring: 'solvabilityDocstring',
    check_assertion: 'solvabilityRounds',
  },

  sandboxCheck: ({ fn, original }, context) => (script) => checkSandboxScript({ functionName: fn.qualname, originalFunction: original, script, context }),
  testCheck:
    ({ fn, original, config }, sandboxScript) =>
    (script) =>
      checkTestScript({ functionName: fn.qualname, originalFunction: original, script, sandboxScript, testCalls: config.loops.sanity.testCalls }),

  withGroundTruth: withNewImplementation,
  definitionSource,
  definitionName: (name) => name,
  mutationTarget: 'function',

  async buildRecord(store, input, thresholds, settingsKey) {
    const { fn } = input;
    const keyed = settingsKey ? { settingsKey } : {};
    if (!input.outcome.accepted) return { accepted: false, fn, rejection: rejectionOf(input), ...keyed };
    const record: DatasetRecord = {
      ...(await sharedRecordFields(store, input, thresholds, await finalResult(store, input))),
      // As RepoST names them.
      func_name: fn.qualname,
      func_path: fn.path,
      // As RepoST stores it: a method without its class's indentation, decorators included.
      orig_func: dedentDefinition(await textOf(store, input.prepared?.sourceKey)),
      function_id: fn.functionId,
      ...(await solvabilityFields(store, input.solvability ?? null)),
    };
    return { accepted: true, fn, record: DatasetRecordSchema.parse(record), ...keyed };
  },
};
