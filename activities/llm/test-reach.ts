/**
 * Whether a test function reaches a call of a given function, for the `reachable` reading of the
 * test-calls sanity check (`loops.sanity.testCalls`).
 *
 * RepoST's own rule is literal: the test function's text must contain a call `f(...)`. A careful
 * test often reaches `f` otherwise: it hands `f` and `f_new_implementation` to a helper of the
 * script (`_compare(f, f_new_implementation, x)`), or loops over the two (`for impl in (f,
 * f_new_implementation): ...`). This reads the script's syntax tree (tree-sitter) and follows
 * such references from the test function through the script's own functions:
 *
 *   - a call whose callee is `f` (a name, or an attribute `obj.f`), or a name standing for it;
 *   - names standing for `f`: a loop variable over a tuple or list literal holding `f` (also in a
 *     comprehension, also unpacked from tuples of the same shape), a name assigned `f`, and a
 *     parameter of a script function that a call passed `f` to (by position or keyword);
 *   - names standing for a collection holding `f` (`impls = (f, g)`, or such a tuple passed to a
 *     helper), looped over as above;
 *   - a call of a function the script defines (top level, nested in the caller, or a method of the
 *     caller's class through `self.`/`cls.`) is followed into that function, with what its
 *     parameters stand for.
 *
 * A reference handed to a function the script does not define (`map(f, xs)`) is not followed:
 * whether a library calls it is not something the script shows. Nothing runs; the analysis is
 * bounded in depth.
 */
import type Parser from 'tree-sitter';

type Node = Parser.SyntaxNode;

/** How deep calls into the script's own functions are followed. */
const MAX_DEPTH = 8;

const DEFINITION_TYPES = new Set(['function_definition']);

/** The definitions a block holds directly (decorated ones unwrapped). */
function definitionsOf(block: Node | null): Node[] {
  if (!block) return [];
  return block.namedChildren.map((c) => (c.type === 'decorated_definition' ? (c.childForFieldName('definition') ?? c) : c));
}

function nameOf(def: Node): string | undefined {
  return def.childForFieldName('name')?.text;
}

/** Strips parentheses around an expression. */
function unwrap(node: Node): Node {
  let n = node;
  while (n.type === 'parenthesized_expression' && n.namedChildren.length === 1) n = n.namedChildren[0]!;
  return n;
}

function isSequenceLiteral(node: Node): boolean {
  return node.type === 'tuple' || node.type === 'list' || node.type === 'set' || node.type === 'expression_list';
}

/** What names stand for inside one function: the target itself, or a collection holding it. */
interface Bindings {
  aliases: Set<string>;
  collections: Set<string>;
}

/** The function's parameters in order, each with the name a caller binds. */
function parametersOf(def: Node): string[] {
  const params = def.childForFieldName('parameters');
  if (!params) return [];
  const out: string[] = [];
  for (const p of params.namedChildren) {
    if (p.type === 'identifier') out.push(p.text);
    else if (p.type === 'default_parameter' || p.type === 'typed_default_parameter') out.push(p.childForFieldName('name')?.text ?? '');
    else if (p.type === 'typed_parameter') out.push(p.namedChildren.find((c) => c.type === 'identifier')?.text ?? '');
    // *args, **kwargs and the bare `*` or `/` markers take nothing by position here.
    else if (p.type === 'list_splat_pattern' || p.type === 'dictionary_splat_pattern' || p.type === 'keyword_separator' || p.type === 'positional_separator') out.push('');
  }
  return out;
}

export class TestReach {
  /** Top-level functions of the script, by name (the last definition wins, as in Python). */
  private readonly topLevel = new Map<string, Node>();

  constructor(private readonly root: Node) {
    for (const def of definitionsOf(root)) {
      const name = nameOf(def);
      if (def.type === 'function_definition' && name) this.topLevel.set(name, def);
    }
  }

  /** Whether `fn` (a function definition) reaches a call of `target` (a simple name). */
  reaches(fn: Node, target: string): boolean {
    return this.visit(fn, target, { aliases: new Set(), collections: new Set() }, 0, new Set());
  }

  private isTarget(node: Node, target: string, b: Bindings): boolean {
    const n = unwrap(node);
    if (n.type === 'identifier') return n.text === target || b.aliases.has(n.text);
    if (n.type === 'attribute') return n.childForFieldName('attribute')?.text === target;
    return false;
  }

  private holdsTarget(node: Node, target: string, b: Bindings): boolean {
    const n = unwrap(node);
    if (n.type === 'identifier' && b.collections.has(n.text)) return true;
    return isSequenceLiteral(n) && n.namedChildren.some((el) => this.isTarget(el, target, b) || (isSequenceLiteral(unwrap(el)) && this.holdsTarget(el, target, b)));
  }

  /** Names a loop (or comprehension) binds to the target while iterating `iterable`. */
  private loopBindings(left: Node, iterable: Node, target: string, b: Bindings, out: Bindings): void {
    const it = unwrap(iterable);
    const l = unwrap(left);
    const elements = isSequenceLiteral(it) ? it.namedChildren : [];
    const direct = it.type === 'identifier' && b.collections.has(it.text);
    if (l.type === 'identifier') {
      if (direct || elements.some((el) => this.isTarget(el, target, b))) out.aliases.add(l.text);
      return;
    }
    // `for label, impl in [("old", f), ("new", g)]`: the position of the target in equal-shaped tuples.
    if (l.type === 'pattern_list' || l.type === 'tuple_pattern' || l.type === 'list_pattern') {
      const names = l.namedChildren;
      for (const el of elements) {
        const tuple = unwrap(el);
        if (!isSequenceLiteral(tuple) || tuple.namedChildren.length !== names.length) continue;
        tuple.namedChildren.forEach((part, i) => {
          const name = unwrap(names[i]!);
          if (name.type === 'identifier' && this.isTarget(part, target, b)) out.aliases.add(name.text);
        });
      }
    }
  }

  /** What names stand for in `fn`, from its parameters (given) and its own assignments and loops. */
  private bindingsIn(fn: Node, target: string, given: Bindings): Bindings {
    const b: Bindings = { aliases: new Set(given.aliases), collections: new Set(given.collections) };
    // Two passes: a loop over a collection assigned further up, an alias of an alias.
    for (let pass = 0; pass < 2; pass++) {
      for (const node of fn.descendantsOfType(['assignment', 'for_statement', 'for_in_clause'])) {
        if (node.type === 'assignment') {
          const left = node.childForFieldName('left');
          const right = node.childForFieldName('right');
          if (!left || !right || unwrap(left).type !== 'identifier') continue;
          if (this.isTarget(right, target, b)) b.aliases.add(unwrap(left).text);
          else if (this.holdsTarget(right, target, b)) b.collections.add(unwrap(left).text);
        } else {
          const left = node.childForFieldName('left');
          const right = node.childForFieldName('right');
          if (left && right) this.loopBindings(left, right, target, b, b);
        }
      }
    }
    return b;
  }

  /** The script's function a call names, seen from `fn`: nested in it, a method of its class, or top level. */
  private calleeOf(call: Node, fn: Node): { def: Node; skipsSelf: boolean } | undefined {
    const callee = call.childForFieldName('function');
    if (!callee) return undefined;
    if (callee.type === 'identifier') {
      const nested = fn
        .descendantsOfType('function_definition')
        .filter((d) => d.id !== fn.id)
        .reverse()
        .find((d) => nameOf(d) === callee.text);
      const def = nested ?? this.topLevel.get(callee.text);
      return def ? { def, skipsSelf: false } : undefined;
    }
    if (callee.type === 'attribute') {
      const object = callee.childForFieldName('object')?.text;
      const method = callee.childForFieldName('attribute')?.text;
      if ((object !== 'self' && object !== 'cls') || !method) return undefined;
      let cls: Node | null = fn.parent;
      while (cls && cls.type !== 'class_definition') cls = cls.parent;
      const def = definitionsOf(cls?.childForFieldName('body') ?? null)
        .reverse()
        .find((d) => DEFINITION_TYPES.has(d.type) && nameOf(d) === method);
      return def ? { def, skipsSelf: true } : undefined;
    }
    return undefined;
  }

  private visit(fn: Node, target: string, given: Bindings, depth: number, seen: Set<string>): boolean {
    const key = `${fn.id}|${[...given.aliases].sort().join(',')}|${[...given.collections].sort().join(',')}`;
    if (seen.has(key) || depth > MAX_DEPTH) return false;
    seen.add(key);
    const b = this.bindingsIn(fn, target, given);
    const body = fn.childForFieldName('body') ?? fn;
    const calls = body.descendantsOfType('call');
    if (calls.some((call) => this.isTarget(call.childForFieldName('function') ?? call, target, b))) return true;
    for (const call of calls) {
      const callee = this.calleeOf(call, fn);
      if (!callee) continue;
      const params = parametersOf(callee.def);
      const positional = callee.skipsSelf ? params.slice(1) : params;
      const passed: Bindings = { aliases: new Set(), collections: new Set() };
      const args = call.childForFieldName('arguments')?.namedChildren ?? [];
      let index = 0;
      for (const arg of args) {
        if (arg.type === 'keyword_argument') {
          const name = arg.childForFieldName('name')?.text;
          const value = arg.childForFieldName('value');
          if (name && value && this.isTarget(value, target, b)) passed.aliases.add(name);
          else if (name && value && this.holdsTarget(value, target, b)) passed.collections.add(name);
          continue;
        }
        if (arg.type === 'list_splat' || arg.type === 'dictionary_splat') break;
        const name = positional[index++];
        if (!name) continue;
        if (this.isTarget(arg, target, b)) passed.aliases.add(name);
        else if (this.holdsTarget(arg, target, b)) passed.collections.add(name);
      }
      if (this.visit(callee.def, target, passed, depth + 1, seen)) return true;
    }
    return false;
  }
}
