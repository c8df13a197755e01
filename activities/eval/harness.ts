/**
 * Failures the harness causes, told apart from the model's. An evaluation script stands in for
 * the repository: it defines what the repository's modules provided, and the modules themselves
 * are not there. A candidate that does what the prompt shows (imports `from logic.log import
 * LOG`, uses a name the prompt's module defines) can fail for that alone. Such a failure is the
 * `harness` kind: reported apart and never counted against the model.
 *
 * A run's failure is the harness's when
 *   - the candidate parses but cannot be placed in the script, or placing it breaks a script that
 *     parsed (`placementFailure`);
 *   - it ends in a ModuleNotFoundError or ImportError naming one of the repository's own modules,
 *     or a relative import with no package around it;
 *   - it ends in a NameError on a name the prompt showed as available (bound at the top level of
 *     the prompt's context, or imported by the candidate from the repository) that the script
 *     does not define.
 */
import { scopeOf } from '../analysis/bindings';
import { topLevelModules } from '../sources/modules';
import type { SandboxResult } from '../sandbox/schema';
import { missingModuleName } from '../sandbox/python-exception';
import type { RepositoryNames } from './candidate-script';
import type { EvalRecord } from './dataset';
import { parsePython } from './function-source';
import { contextBlocks } from './prompt-context';

/** What the harness knows of a record's repository: its modules, and the names its prompt shows. */
export interface RecordNames extends RepositoryNames {
  /** Names bound at the top level of the context's blocks: what the prompt shows as available. */
  promised: ReadonlySet<string>;
}

/** The repository's top-level modules (the record's own list, else its paths) and the names the prompt shows. */
export function recordNames(record: Pick<EvalRecord, 'path' | 'context'> & { localModules?: readonly string[] | null }): RecordNames {
  const blocks = contextBlocks(record.context);
  const paths = [record.path, ...blocks.map((b) => b.path).filter((p): p is string => p !== null)];
  const ownModules = new Set([...(record.localModules ?? []), ...topLevelModules(paths)]);
  const promised = new Set<string>();
  for (const b of blocks) {
    for (const name of scopeOf(parsePython(b.code).rootNode).bindings.keys()) promised.add(name);
  }
  return { ownModules, promised };
}

/** What the harness did when it placed the candidate. */
export interface Placement {
  /** Names the candidate imported from the repository's modules that the script does not define. */
  unresolved: readonly string[];
  /** Names the script defines at its top level. */
  scriptNames: ReadonlySet<string>;
}

const NAME_ERROR = /^name '([A-Za-z_]\w*)' is not defined/;
const RELATIVE_IMPORT = /attempted relative import (with no known parent package|beyond top-level package)/;

/** Why a finished run's failure is the harness's, or null when it is the candidate's own. */
export function harnessCause(result: SandboxResult, names: RecordNames, placement: Placement): string | null {
  const exc = result.exception;
  if (!exc || result.status === 'passed') return null;
  if (exc.type === 'ModuleNotFoundError' || exc.type === 'ImportError') {
    const missing = missingModuleName(exc, result.stderr);
    if (missing && names.ownModules.has(missing)) return `the repository's module ${missing} is not part of the evaluation script (${exc.type}: ${exc.message})`;
    if (RELATIVE_IMPORT.test(exc.message)) return `the repository's package is not part of the evaluation script (${exc.type}: ${exc.message})`;
    return null;
  }
  if (exc.type === 'NameError') {
    const name = NAME_ERROR.exec(exc.message)?.[1];
    if (!name || placement.scriptNames.has(name)) return null;
    if (placement.unresolved.includes(name)) return `the candidate imports ${name} from the repository, and the evaluation script does not define it`;
    if (names.promised.has(name)) return `the prompt shows ${name} as available, and the evaluation script does not define it`;
  }
  return null;
}

/**
 * Why a candidate that could not be placed is the harness's failure, or null when the candidate
 * itself does not parse (a syntax error of the model's).
 */
export function placementFailure(candidateCode: string, preamble: string, evalScript: string, reason: string): string | null {
  const broken = (text: string) => parsePython(text).rootNode.hasError;
  if (broken(candidateCode) || (preamble.trim() && broken(preamble))) return null;
  return `the harness could not place the candidate in the script${broken(evalScript) ? ' (the script itself does not parse cleanly)' : ''}: ${reason}`;
}

/** A placed script that no longer parses although the script and the candidate did: the placement broke it. */
export function placementBroke(placed: string, candidateCode: string, preamble: string, evalScript: string): boolean {
  const broken = (text: string) => parsePython(text).rootNode.hasError;
  return broken(placed) && !broken(evalScript) && !broken(candidateCode) && !(preamble.trim() && broken(preamble));
}
