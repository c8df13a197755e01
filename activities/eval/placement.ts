/**
 * Where a candidate goes in its record's evaluation script, and whose failure it is when it cannot
 * go there: the model's (its code does not parse) or the harness's. Shared by the evaluation's
 * sandbox activities and the verification server (activities/serve), so both give one verdict.
 */
import { isolatedPlacement, NEW_IMPLEMENTATION_SUFFIX, withNewImplementation, type CandidateSpec } from '../sandbox';
import { insertPreamble, candidateScript, scriptBindings } from './candidate-script';
import type { EvalRecord } from './dataset';
import { parsePython } from './function-source';
import { placementBroke, placementFailure, recordNames, type RecordNames } from './harness';
import { harnessOutcome, type SampleOutcome } from './outcome';

/** A candidate as taken from an answer (`extractCandidate`): its definition and the imports and helpers beside it. */
export interface CandidateCode {
  code: string;
  preamble: string;
}

export type Placed =
  | { ok: true; script: string; candidate?: CandidateSpec; names: RecordNames; dropped: string[]; unresolved: string[]; scriptNames: ReadonlySet<string> }
  | { ok: false; outcome: SampleOutcome };

/**
 * The record's script with a candidate in it (or, with `c: null`, the ground truth), what the
 * harness left out of the candidate's preamble, and what it knows of the repository; or, when it
 * cannot be placed, whose failure that is. `isolated`: the candidate goes to a process of its own
 * (`candidate`, the script gets a stub calling it there); otherwise it is placed in the script as
 * `<name>_new_implementation`.
 */
export function placeCandidateCode(record: EvalRecord, c: CandidateCode | null, isolated = false): Placed {
  const names = recordNames(record);
  const scriptNames = new Set(scriptBindings(parsePython(record.evalScript).rootNode).keys());
  // A record whose own script binds the name the harness places would judge its own version, not
  // the answer (a dataset is untrusted input too): refused, and not counted against the model.
  const placedName = `${record.qualname}${NEW_IMPLEMENTATION_SUFFIX}`;
  if (!record.qualname.includes('.') && scriptNames.has(placedName)) {
    return { ok: false, outcome: harnessOutcome(`the record's own script defines ${placedName}, the name the harness places the answer under: it cannot judge an answer`) };
  }
  if (c === null) {
    try {
      if (isolated) {
        const p = isolatedPlacement(record.evalScript, record.origFunc, record.qualname);
        return { ok: true, script: p.script, candidate: { target: p.target, kind: p.kind, module: p.module }, names, dropped: [], unresolved: [], scriptNames };
      }
      return { ok: true, script: withNewImplementation(record.evalScript, record.origFunc, record.qualname), names, dropped: [], unresolved: [], scriptNames };
    } catch (err) {
      return { ok: false, outcome: harnessOutcome(`the harness could not place the ground truth in the script: ${(err as Error).message}`) };
    }
  }
  try {
    if (isolated) {
      const p = isolatedPlacement(record.evalScript, c.code, record.qualname);
      const module = insertPreamble(p.module, c.preamble, names);
      return { ok: true, script: p.script, candidate: { target: p.target, kind: p.kind, module: module.script }, names, dropped: module.dropped, unresolved: module.unresolved, scriptNames };
    }
    const placed = candidateScript(record.evalScript, { ok: true, bare: false, ...c }, record.qualname, names);
    if (placementBroke(placed.script, c.code, c.preamble, record.evalScript)) {
      return { ok: false, outcome: harnessOutcome('the harness broke the script when it placed the candidate (the placed script does not parse; the script and the candidate do)') };
    }
    return { ok: true, script: placed.script, names, dropped: placed.dropped, unresolved: placed.unresolved, scriptNames };
  } catch (err) {
    const reason = (err as Error).message;
    const harness = placementFailure(c.code, c.preamble, record.evalScript, reason);
    // Without a function that parses, tree-sitter found nothing to rename: Python would not either.
    return { ok: false, outcome: harness ? harnessOutcome(harness) : { passed: false, kind: 'syntax_error', exceptionType: null, summary: `the candidate cannot be placed in the script: ${reason}`.slice(0, 300) } };
  }
}
