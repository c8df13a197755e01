/**
 * The surviving mutants a dataset record lists (`mutation_survivors`: each a unified diff of the
 * placed ground-truth copy, `<name>_new_implementation`, against one wrong change its tests let
 * pass), turned back into function sources, so an evaluation can say when a passing candidate is
 * one of them: a pass that means little, since the record's tests cannot tell that change from
 * the ground truth. The diffs are applied with `diff` (jsdiff); one that does not apply (a diff
 * cut for length, a malformed one) is left out.
 */
import { applyPatch } from 'diff';
import { dedentLike, newImplementationName } from '../sandbox/new-implementation';
import { docstringStatement, findDefinition, outerDefinition, parsePython } from './function-source';

export interface SurvivorSource {
  /** `operator, line N` as the record lists it. */
  label: string;
  /** The mutant, named as the target (`name`, not `name_new_implementation`), dedented. */
  source: string;
}

const HEADER = /^## \d+\. ([a-z_]+), line (\d+)$/gm;

/** The survivors' diffs of a record's `mutation_survivors` text, in order. */
export function survivorDiffs(text: string): { label: string; diff: string }[] {
  const heads = [...text.matchAll(HEADER)];
  return heads.map((h, i) => {
    const end = i + 1 < heads.length ? heads[i + 1]!.index : text.length;
    return { label: `${h[1]}, line ${h[2]}`, diff: text.slice(h.index + h[0].length, end).trim() };
  });
}

/** Each survivor's source, from the record's ground truth and its diff (pure). */
export function survivorSources(origFunc: string, qualname: string, survivorsText: string | null | undefined): SurvivorSource[] {
  if (!survivorsText) return [];
  const name = qualname.split('.').pop()!;
  const placed = newImplementationName(name);
  const defLine = new RegExp(`^((?:async[ \\t]+)?def[ \\t]+)${name}\\b`, 'm');
  const base = dedentLike(origFunc).replace(defLine, `$1${placed}`);
  const back = new RegExp(`^((?:async[ \\t]+)?def[ \\t]+)${placed}\\b`, 'm');
  const out: SurvivorSource[] = [];
  for (const { label, diff } of survivorDiffs(survivorsText)) {
    if (diff.endsWith('[diff cut]')) continue;
    // A dataset's text: a diff that is malformed or does not fit the ground truth is left out.
    let patched: string | false;
    try {
      patched = applyPatch(base, diff);
    } catch {
      patched = false;
    }
    if (patched === false) continue;
    out.push({ label, source: patched.replace(back, `$1${name}`) });
  }
  return out;
}

/**
 * The definition of `name` in a piece of code (decorators included), dedented and without its
 * docstring (what a candidate and a mutant are compared on); null when there is none.
 */
export function functionDefinitionSource(code: string, name: string): string | null {
  const def = findDefinition(parsePython(code).rootNode, name);
  if (!def) return null;
  const outer = outerDefinition(def);
  const lineStart = code.lastIndexOf('\n', outer.startIndex - 1) + 1;
  let text = code.slice(lineStart, outer.endIndex);
  const doc = docstringStatement(def);
  // A body that is only its docstring keeps it (it would not parse without).
  if (doc && (def.childForFieldName('body')?.namedChildCount ?? 0) > 1) {
    const docLineStart = code.lastIndexOf('\n', doc.startIndex - 1) + 1;
    const docLineEnd = code.indexOf('\n', doc.endIndex);
    text = code.slice(lineStart, docLineStart) + code.slice(docLineEnd < 0 ? outer.endIndex : docLineEnd + 1, outer.endIndex);
  }
  return `${dedentLike(text).replace(/\s+$/, '')}\n`;
}
