/**
 * A target kind: everything the pipeline's steps decide by what they are testing (a function, a
 * whole class) behind one interface, so the activities ask the kind instead of branching on it.
 * A new kind (a module, a script entry point) is one more file beside `function.ts` and
 * `class.ts`, named in `index.ts`.
 */
import type { Config } from '../../temporal.config';
import type { RepositoryAnalyzer } from '../analysis';
import type { FunctionRef, PreparedFunction, RecordInput, RepoSnapshot, TargetKind } from '../contracts';
import type { Thresholds } from '../dataset/records';
import type { KindSteps } from '../llm/estimate';
import type { PromptKind, PromptVars } from '../llm/prompts';
import type { SanityReport } from '../llm/sanity';
import type { Placement } from '../sandbox/new-implementation';
import type { CoverageReport } from '../sandbox/schema';
import type { Artifacts } from '../store/artifacts';
import type { StoredRecord } from '../store/records';

/** One prompt to ask: its kind and the variables that kind takes. */
export type PromptRequest = { [K in PromptKind]: { kind: K; vars: PromptVars[K] } }[PromptKind];

/** What every step's prompt gets: the target's name and the sandbox's cache directory. */
export interface ScriptVars {
  functionName: string;
  script: string;
  cacheDir: string;
}

/** A coverage round's variables (over the whole target). */
export type CoverageVars = ScriptVars & { missingLines: string; missingBranches: string; coverage: number };

/** What a step's sanity check is given: the target, its preparation and original source, the run's settings. */
export interface CheckInput {
  fn: FunctionRef;
  prepared: PreparedFunction;
  original: string;
  config: Config;
}

/** Where a target was found, as a candidate listing gives it (its id and names in its file). */
export interface TargetIdentity {
  id: string;
  path: string;
  qualname: string;
  name: string;
  occurrence?: number;
}

export type Prepared = { ok: true; prepared: PreparedFunction } | { ok: false; reason: string };

export interface TargetKindModule {
  readonly kind: TargetKind;
  /** How histories and rejections name it. */
  readonly noun: 'function' | 'class';

  /** Its reference, from the snapshot it was found in. */
  ref(snapshot: RepoSnapshot, found: TargetIdentity): FunctionRef;
  /** Its source, the context of what it uses, and what its record needs, stored as artifacts. */
  prepare(analyzer: RepositoryAnalyzer, fn: FunctionRef, store: Artifacts): Promise<Prepared>;

  /** The prompts of the LLM steps. */
  sandboxPrompt(fn: FunctionRef, prepared: PreparedFunction, vars: { functionName: string; filePath: string; context: string; cacheDir: string }): PromptRequest;
  testsPrompt(vars: ScriptVars): PromptRequest;
  debugPrompt(vars: ScriptVars & { errorMessage: string }): PromptRequest;
  coveragePrompt(vars: CoverageVars, coverage: CoverageReport | null): PromptRequest;
  checkFunctionalityPrompt(fn: FunctionRef, original: string, script: string): PromptRequest;
  checkTestsPrompt(vars: { functionName: string; script: string }): PromptRequest;

  /** The LLM steps a crawl asks for a target of this kind, and how often (what the crawl estimate counts). */
  readonly llmSteps: KindSteps;

  /** The sanity check of a standalone script (before tests), given the context the model saw. */
  sandboxCheck(input: CheckInput, context: string): (script: string) => SanityReport;
  /** The sanity check of a script with tests, given the script the tests were added to. */
  testCheck(input: CheckInput, sandboxScript: string): (script: string) => SanityReport;

  /** The script with the ground truth copied in as `<name>_new_implementation`. */
  withGroundTruth(script: string, original: string, name: string): string;
  /** How a missing definition of it in a script is named (`foo`, `top-level class Foo`). */
  definitionName(name: string): string;
  /** The target's definition as the script has it (for the AST check), or null. */
  definitionSource(script: string, name: string): string | null;
  /** What the mutants harness mutates: a function's body, or the bodies of a class's methods. */
  readonly mutationTarget: Placement;

  /** Its stored record: accepted (its dataset line) or rejected. */
  buildRecord(store: Artifacts, input: RecordInput, thresholds: Thresholds, settingsKey?: string): Promise<StoredRecord>;
}

/** A target's reference: the snapshot's fields (commit, its date, split, license and its source) written once for every kind. */
export function targetRef(snapshot: RepoSnapshot, found: TargetIdentity): FunctionRef {
  return {
    functionId: found.id,
    repoId: snapshot.repoId,
    commit: snapshot.commit,
    path: found.path,
    qualname: found.qualname,
    name: found.name,
    ...(found.occurrence ? { occurrence: found.occurrence } : {}),
    split: snapshot.split,
    license: snapshot.license,
    // The sandbox resolves the target's packages as of its commit's date.
    ...(snapshot.commitDate ? { commitDate: snapshot.commitDate } : {}),
    ...(snapshot.licenseSource ? { licenseSource: snapshot.licenseSource } : {}),
  };
}
