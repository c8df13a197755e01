/**
 * The class kind (class environments): a whole top-level class, the context of everything its
 * methods use, the class prompts and sanity checks (the class kept whole, a token allowance per
 * method), the class copied in as `<Class>_new_implementation`, coverage over all its methods, its
 * record a `classes-dataset.jsonl` line with the class corpus's facts.
 */
import { metricsRecord } from '../classes/metrics';
import type { ClassFacts, FunctionRef, PreparedFunction } from '../contracts';
import { finalResult, rejectionOf, sharedRecordFields, textOf } from '../dataset/records';
import { classDefinitionSource } from '../dataset/script-parts';
import { checkClassSandboxScript, checkClassTestScript, testFunctionNames } from '../llm/sanity';
import { withNewClassImplementation } from '../sandbox/new-implementation';
import type { CoverageReport } from '../sandbox/schema';
import { topLevelModules } from '../sources/modules';
import { ClassDatasetRecordSchema, type ClassDatasetRecord } from '../store/records';
import { targetRef, type TargetKindModule } from './kind';

/** A class's checks: the class kept whole (a token allowance per method). */
const classInput = (fn: FunctionRef, prepared: PreparedFunction, originalClass: string) => ({ className: fn.qualname, originalClass, methods: prepared.methods?.length ?? 1 });

/** A class's coverage per method, one line each, for its coverage round. */
const methodLines = (cov: CoverageReport | null) =>
  cov?.methods?.length
    ? cov.methods.map((m) => `- ${m.name}: ${Math.round(m.rate * 1000) / 10}% (${m.hasBranches ? `${m.branches.taken}/${m.branches.total} branch arcs` : `${m.lines.covered}/${m.lines.total} lines`})`).join('\n')
    : '(no method reached)';

export const classKind: TargetKindModule = {
  kind: 'class',
  noun: 'class',

  ref: (snapshot, found) => ({ ...targetRef(snapshot, found), kind: 'class' }),

  async prepare(analyzer, fn, store) {
    // The whole class: its source, the context of all its methods, and what its record carries.
    const a = analyzer.analyzeClass(fn.path, fn.qualname, fn.occurrence ?? 0);
    const info = analyzer.classCandidates().find((c) => c.id === fn.functionId)?.info;
    if (!info) return { ok: false, reason: `analysis failed: class ${fn.qualname} (id ${fn.functionId}) is not in ${fn.path} at ${fn.commit}` };
    const facts: ClassFacts = {
      skeleton: a.skeleton,
      documentation: a.documentation,
      metrics: metricsRecord(info.metrics),
      methodMetrics: info.methods.map((m) => ({ name: m.name, line: m.line, cyclomatic: m.cyclomatic, essential: m.essential, max_nesting: m.maxNesting })),
    };
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
        methods: a.methods,
        classFactsKey: await store.putJson(facts),
      },
    };
  },

  sandboxPrompt: (_fn, _prepared, vars) => ({ kind: 'class_sandbox', vars }),
  testsPrompt: (vars) => ({ kind: 'class_tests', vars }),
  debugPrompt: (vars) => ({ kind: 'class_debug', vars }),
  coveragePrompt: (vars, coverage) => ({ kind: 'class_coverage', vars: { ...vars, methodCoverage: methodLines(coverage) } }),
  checkFunctionalityPrompt: (fn, original, script) => ({
    kind: 'class_check_functionality',
    vars: { functionName: fn.qualname, originalFunction: original, sandboxedFunction: classDefinitionSource(script, fn.qualname) ?? script },
  }),
  checkTestsPrompt: (vars) => ({ kind: 'class_check_tests', vars }),
  llmSteps: {
    class_sandbox: 'each',
    class_tests: 'each',
    class_check_functionality: 'each',
    class_check_tests: 'each',
    class_debug: 'debugRounds',
    class_coverage: 'coverageRounds',
    // The mutation stage's prompt is the one both kinds share.
    mutation: 'mutationRounds',
  },

  sandboxCheck: ({ fn, prepared, original }, context) => (script) => checkClassSandboxScript({ ...classInput(fn, prepared, original), script, context }),
  testCheck:
    ({ fn, prepared, original }, sandboxScript) =>
    (script) =>
      checkClassTestScript({ ...classInput(fn, prepared, original), script, sandboxScript }),

  withGroundTruth: withNewClassImplementation,
  definitionSource: classDefinitionSource,
  definitionName: (name) => `top-level class ${name}`,
  mutationTarget: 'class',

  async buildRecord(store, input, thresholds, settingsKey) {
    const { fn, prepared } = input;
    const keyed = settingsKey ? { settingsKey } : {};
    if (!input.outcome.accepted) return { kind: 'class', accepted: false, fn, rejection: rejectionOf(input), ...keyed };
    const result = await finalResult(store, input);
    const facts = prepared?.classFactsKey ? await store.getJson<ClassFacts>(prepared.classFactsKey) : null;
    const shared = await sharedRecordFields(store, input, thresholds, result);
    const record: ClassDatasetRecord = {
      ...shared,
      class_name: fn.qualname,
      class_path: fn.path,
      orig_class: await textOf(store, prepared?.sourceKey),
      class_id: fn.functionId,
      test_functions: testFunctionNames(shared.eval_script),
      method_coverage: (result?.coverage?.methods ?? []).map((m) => ({ method: m.name, rate: m.rate, line_rate: m.lines.rate, branch_rate: m.branches.rate, has_branches: m.hasBranches })),
      methods: prepared?.methods ?? [],
      class_skeleton: facts?.skeleton ?? '',
      documentation_level: facts?.documentation ?? 'none',
      metrics: facts?.metrics ?? {},
      method_metrics: facts?.methodMetrics ?? [],
    };
    return { kind: 'class', accepted: true, fn, record: ClassDatasetRecordSchema.parse(record), ...keyed };
  },
};
