/**
 * The target kinds, by name: the one place a target's kind is looked up. The activities ask
 * `kindOf(fn)` what to prompt, check, place, compare, mutate and record.
 */
import type { FunctionRef, RecordInput, TargetKind } from '../contracts';
import type { Thresholds } from '../dataset/records';
import type { StoredRecord } from '../store/records';
import type { Artifacts } from '../store/artifacts';
import { classKind } from './class';
import { functionKind } from './function';
import type { TargetKindModule } from './kind';

export type { CheckInput, PromptRequest, TargetIdentity, TargetKindModule } from './kind';
export { classKind, functionKind };

const KINDS: Record<TargetKind, TargetKindModule> = { function: functionKind, class: classKind };

/** The module of a target's kind (a reference without one is a function's, as RepoST's are). */
export function kindOf(fn: Pick<FunctionRef, 'kind'>): TargetKindModule {
  return KINDS[fn.kind ?? 'function'];
}

/** Builds the stored form of a target's end (accepted or rejected); texts are read from the artifacts. */
export function buildStoredRecord(store: Artifacts, input: RecordInput, thresholds: Thresholds, settingsKey?: string): Promise<StoredRecord> {
  return kindOf(input.fn).buildRecord(store, input, thresholds, settingsKey);
}
