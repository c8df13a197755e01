/**
 * The OpenClassGen metric groups of a class, computed from its tree-sitter tree: complexity per
 * method (cyclomatic by radon's rules, essential, nesting), attributes and cohesion (LCOM4 and
 * Henderson-Sellers' LCOM*), coupling (fan-out, the repository definitions the class names, the
 * classes it is coupled to) and, over the whole repository, its fan-in. Definitions are in
 * activities/analysis/README.md. Everything walks with a TreeCursor: node objects of the binding
 * are costly, and a repository has thousands of methods.
 */
import { importBindings, scopeOf } from './bindings';
import { parameterNames } from './extract';
import type { SyntaxNode, TreeCursor } from './parser';
import type { ModuleInfo, Repository } from './repository';
import type { Definition, Resolver } from './resolver';
import { decoratorsOf, fieldAt, outerNode, typeAt } from './syntax';

/** One frame of a cursor walk: an ancestor's type, its field in its parent and where it starts. */
interface Frame {
  type: string;
  field: string | undefined;
  start: number;
}

/**
 * Pre-order walk of `root` with the ancestors at hand. `enter` returns whether to go into the
 * node's children; `leave` (optional) runs when a node that was entered is left, with the node's
 * depth (its number of ancestors, as `stack.length` was when it was entered).
 */
function walk(root: SyntaxNode, enter: (cursor: TreeCursor, type: string, field: string | undefined, stack: Frame[]) => boolean, leave?: (frame: Frame, depth: number) => void): void {
  const cursor = root.walk();
  const stack: Frame[] = [];
  for (;;) {
    const type = typeAt(cursor);
    const field = stack.length ? fieldAt(cursor) : undefined;
    const start = cursor.startIndex;
    if (enter(cursor, type, field, stack)) {
      if (cursor.gotoFirstChild()) {
        stack.push({ type, field, start });
        continue;
      }
      leave?.({ type, field, start }, stack.length);
    }
    for (;;) {
      if (stack.length === 0) return;
      if (cursor.gotoNextSibling()) break;
      cursor.gotoParent();
      const frame = stack.pop()!;
      leave?.(frame, stack.length);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Complexity of one method
// ---------------------------------------------------------------------------------------------

export interface MethodMetrics {
  name: string;
  /** 1-based line of the `def` keyword (the line radon and Python's ast report). */
  line: number;
  cyclomatic: number;
  essential: number;
  /** Deepest nesting of if/for/while/try/with/match inside the method (0: straight-line code). */
  maxNesting: number;
}

/** Statements that nest; a nested function's statements continue the count of the one around it. */
const NESTING = new Set(['if_statement', 'for_statement', 'while_statement', 'try_statement', 'with_statement', 'match_statement']);

/** Decision nodes that add exactly one, as radon counts them (`if_clause` only in comprehensions). */
const PLUS_ONE = new Set(['if_statement', 'elif_clause', 'conditional_expression', 'boolean_operator', 'for_in_clause']);

/** Definitions inside a method: radon gives them blocks of their own, so they add nothing to it. */
const NESTED_DEFINITIONS = new Set(['function_definition', 'class_definition', 'decorated_definition']);

/** Whether a try statement's handlers are `except*` ones (Python's TryStar, which radon does not count). */
function isTryStar(tryNode: SyntaxNode): boolean {
  return tryNode.namedChildren.some((c) => c.type === 'except_group_clause' || (c.type === 'except_clause' && c.child(1)?.type === '*'));
}

/** A case pattern that matches anything and binds at most a name: `_`, `x`, `(x)` (radon's `MatchAs` without a sub-pattern). */
function isIrrefutableCase(clause: SyntaxNode): boolean {
  const patterns = clause.namedChildren.filter((c) => c.type === 'case_pattern');
  if (patterns.length !== 1 || clause.children.some((c) => c.type === ',')) return false;
  let p: SyntaxNode = patterns[0]!;
  for (;;) {
    const inner = p.namedChildren.filter((c) => c.type !== 'comment');
    if (inner.length === 0) return p.text.trim() === '_';
    if (inner.length !== 1) return false;
    const only = inner[0]!;
    if (only.type === 'dotted_name') return only.namedChildCount === 1;
    // `(x)` is a group pattern; `(x,)` is a one-element sequence.
    if (only.type === 'tuple_pattern' && only.namedChildCount === 1 && !only.children.some((c) => c.type === ',')) {
      p = only.namedChildren[0]!;
      continue;
    }
    if (only.type === 'case_pattern') {
      p = only;
      continue;
    }
    return false;
  }
}

/**
 * What a compound statement adds to the cyclomatic complexity beyond its `if`/`elif` keywords:
 * a loop 1 (2 with an `else`), a try one per `except` plus one for an `else` (nothing for `except*`),
 * a match one per case except one catch-all.
 */
export function decisionWeight(node: SyntaxNode): number {
  switch (node.type) {
    case 'for_statement':
    case 'while_statement':
      return 1 + (node.childForFieldName('alternative') ? 1 : 0);
    case 'try_statement': {
      if (isTryStar(node)) return 0;
      let n = 0;
      for (const c of node.namedChildren) if (c.type === 'except_clause' || c.type === 'else_clause') n++;
      return n;
    }
    case 'match_statement': {
      const body = node.childForFieldName('body');
      const cases = body ? body.namedChildren.filter((c) => c.type === 'case_clause') : [];
      return Math.max(0, cases.length - (cases.some(isIrrefutableCase) ? 1 : 0));
    }
    default:
      return PLUS_ONE.has(node.type) || node.type === 'assert_statement' ? 1 : 0;
  }
}

/** Control structures that essential complexity can find left by a jump: those that add to cyclomatic complexity. */
const STRUCTURES = new Set(['if_statement', 'for_statement', 'while_statement', 'try_statement', 'match_statement']);
const LOOPS = new Set(['for_statement', 'while_statement']);
const JUMPS = new Set(['return_statement', 'break_statement', 'continue_statement']);

/** The last statement of a block, trailing comments aside. */
function isLastStatement(node: SyntaxNode): boolean {
  for (let s = node.nextNamedSibling; s; s = s.nextNamedSibling) if (s.type !== 'comment') return false;
  return true;
}

/**
 * The structures a jump branches out of (see essentialComplexity). `stop` is the method's body.
 * A jump lands where the structure's normal end would lead anyway when it is in tail position:
 * the last statement of every block up to its target (the method body for `return`, the loop
 * body for `continue`), never passing a loop body (whose end goes back to the loop's head) or
 * a try body followed by an `else`.
 */
function structuresLeft(jump: SyntaxNode, stop: SyntaxNode): SyntaxNode[] {
  const kind = jump.type;
  const passed: SyntaxNode[] = [];
  let tail = kind !== 'break_statement';
  let child: SyntaxNode = jump;
  for (let p = jump.parent; p; child = p, p = p.parent) {
    // Case clauses are alternatives, not statements one after another.
    if (p.type === 'block' && child.type !== 'case_clause' && !isLastStatement(child)) tail = false;
    if (p.id === stop.id) break;
    if (LOOPS.has(p.type)) {
      const inBody = p.childForFieldName('body')?.id === child.id;
      if (inBody && (kind === 'break_statement' || kind === 'continue_statement')) {
        // The loop this jump belongs to: `break` leaves it too, `continue` goes to its head.
        if (kind === 'break_statement') passed.push(p);
        return tail ? [] : passed;
      }
      if (inBody) tail = false;
    }
    if (p.type === 'try_statement' && p.childForFieldName('body')?.id === child.id && p.namedChildren.some((c) => c.type === 'else_clause')) tail = false;
    if (STRUCTURES.has(p.type) && (p.type === 'if_statement' || decisionWeight(p) > 0)) passed.push(p);
  }
  return tail ? [] : passed;
}

/**
 * Cyclomatic complexity, essential complexity and maximum nesting of one function, in one walk
 * of its body.
 *
 * Cyclomatic complexity follows radon (6.0.1, `radon cc`): 1, plus one per `if`, `elif`,
 * conditional expression and `assert` (nothing inside an assert counts); per `and`/`or` operator; per comprehension `for` and each
 * of its `if`s; per `for`/`while` loop and one more for its `else`; per `except` clause of a try
 * and one for its `else` (`except*` handlers count nothing); per match case, less one when some
 * case is a catch-all (`_` or a bare name). Decorators, defaults and annotations of the method do
 * not count; nested functions and classes count toward themselves, not the method; lambdas count
 * toward the method.
 *
 * Essential complexity is McCabe's: 1 plus the control structures that are left by a branch out
 * of them ("branching out of a loop or a decision", the unstructured primitives; Python has no
 * branch into one). A `return` leaves every structure around it, `break` every structure up to
 * and including its loop, `continue` those inside its loop; a jump in tail position (see
 * structuresLeft) lands where the normal end would, and leaves nothing. `raise` is an exception,
 * not a branch. The structures are those that add to the cyclomatic complexity (if, loops, a try
 * with handlers or else, a match with a refutable case), so essential <= cyclomatic.
 */
export function methodMetrics(fn: SyntaxNode): MethodMetrics {
  const counter = new MethodCounter();
  const body = fn.childForFieldName('body');
  if (body) walk(body, (cursor, type, field) => counter.enter(cursor, type, field), (frame) => counter.leave(frame.type));
  return counter.result(fn);
}

/**
 * The complexity of one function counted node by node as a walk of its body goes (see
 * methodMetrics): `enter` for each node of the body, `leave` for each node entered.
 */
class MethodCounter {
  private cyclomatic = 1;
  private nesting = 0;
  private maxNesting = 0;
  /** Nested definitions the walk is in: their decisions are their own. */
  private nested = 0;
  /** Asserts the walk is in: an assert counts once, whatever its condition holds (radon does not look inside). */
  private asserts = 0;
  private readonly jumps: SyntaxNode[] = [];

  enter(cursor: TreeCursor, type: string, field: string | undefined): true {
    if (NESTING.has(type)) this.maxNesting = Math.max(this.maxNesting, ++this.nesting);
    if (NESTED_DEFINITIONS.has(type)) this.nested++;
    else if (type === 'assert_statement') {
      if (this.nested === 0 && this.asserts === 0) this.cyclomatic++;
      this.asserts++;
    } else if (this.nested === 0 && this.asserts === 0) {
      if (PLUS_ONE.has(type)) this.cyclomatic++;
      else if (type === 'if_clause' && field !== 'guard') this.cyclomatic++;
      else if (type === 'for_statement' || type === 'while_statement' || type === 'try_statement' || type === 'match_statement') this.cyclomatic += decisionWeight(cursor.currentNode);
      else if (JUMPS.has(type)) this.jumps.push(cursor.currentNode);
    }
    return true;
  }

  leave(type: string): void {
    if (NESTING.has(type)) this.nesting--;
    if (NESTED_DEFINITIONS.has(type)) this.nested--;
    else if (type === 'assert_statement') this.asserts--;
  }

  result(fn: SyntaxNode): MethodMetrics {
    const name = fn.childForFieldName('name')?.text ?? '';
    const line = fn.startPosition.row + 1;
    const body = fn.childForFieldName('body');
    const left = new Set<number>();
    if (body) for (const j of this.jumps) for (const s of structuresLeft(j, body)) left.add(s.id);
    return { name, line, cyclomatic: this.cyclomatic, essential: Math.min(this.cyclomatic, 1 + left.size), maxNesting: this.maxNesting };
  }
}

/** Radon's cyclomatic complexity of a function (see methodMetrics). */
export function cyclomaticComplexity(fn: SyntaxNode): number {
  return methodMetrics(fn).cyclomatic;
}

// ---------------------------------------------------------------------------------------------
// Attributes and cohesion
// ---------------------------------------------------------------------------------------------

/** The name the instance (or, in a classmethod, the class) goes by in a method, or null (staticmethod, no parameters). */
function receiverName(fn: SyntaxNode): string | null {
  const decorators = decoratorsOf(fn).map((d) => d.text);
  if (decorators.some((d) => /^@\s*staticmethod\b/.test(d))) return null;
  return parameterNames(fn.childForFieldName('parameters'))[0] ?? null;
}

/** Patterns a target can sit in and still be assigned: `self.a, self.b = ...`, `a, (b, *c) = ...`. */
const TARGET_CONTAINERS = new Set(['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'parenthesized_expression', 'list_splat_pattern']);

export interface ReceiverUse {
  /** Names read or written through the receiver (`self.x`, `cls.x`), methods included. */
  used: Set<string>;
  /** Names assigned through the receiver (`self.x = ...`, `self.x += ...`, `self.x: T = ...`). */
  assigned: Set<string>;
}

/** What a method does through `self` (or `cls`), nested functions and lambdas included (they share it). */
export function receiverUse(fn: SyntaxNode, text: string): ReceiverUse {
  const collector = new ReceiverCollector(fn, text);
  const body = fn.childForFieldName('body');
  if (body && collector.receiver && text.slice(body.startIndex, body.endIndex).includes(`${collector.receiver}.`)) {
    walk(body, (cursor, type, field, stack) => collector.enter(cursor, type, field, stack));
  }
  return collector.use;
}

/** What a method does through its receiver, collected node by node as a walk of its body goes. */
class ReceiverCollector {
  readonly receiver: string | null;
  readonly use: ReceiverUse = { used: new Set(), assigned: new Set() };
  /** Reads an attribute's object without moving the walking cursor. */
  private peek: TreeCursor | null = null;

  constructor(
    private readonly fn: SyntaxNode,
    private readonly text: string,
  ) {
    this.receiver = receiverName(fn);
  }

  enter(cursor: TreeCursor, type: string, field: string | undefined, stack: readonly Frame[]): true {
    if (type !== 'attribute' || !this.receiver) return true;
    const text = this.text;
    this.peek ??= this.fn.walk();
    this.peek.resetTo(cursor);
    if (!this.peek.gotoFirstChild() || typeAt(this.peek) !== 'identifier' || text.slice(this.peek.startIndex, this.peek.endIndex) !== this.receiver) return true;
    // `self.name` ends with the name (whatever spacing or line continuation comes before it).
    const attr = /\p{ID_Continue}+$/u.exec(text.slice(cursor.startIndex, cursor.endIndex))?.[0];
    if (!attr) return true;
    this.use.used.add(attr);
    let f = field;
    let i = stack.length - 1;
    while (i >= 0 && TARGET_CONTAINERS.has(stack[i]!.type)) f = stack[i--]!.field;
    if (i >= 0 && f === 'left' && (stack[i]!.type === 'assignment' || stack[i]!.type === 'augmented_assignment')) this.use.assigned.add(attr);
    return true;
  }
}

/** Methods LCOM leaves out: a constructor sets most attributes and would join every group. */
const CONSTRUCTORS = new Set(['__init__', '__new__', '__post_init__']);

/**
 * LCOM4 (Hitz & Montazeri): the number of connected groups of the class's methods, two methods
 * being connected when both use one attribute through `self`/`cls` or one uses the other
 * (`self.m(...)`, a property read). Constructors are left out; 0 without methods.
 *
 * LCOM* (Henderson-Sellers): (mean over the attributes used of the number of methods using each,
 * minus m) / (1 - m), over the same m methods and the attributes (not methods) they use through
 * `self`/`cls`; 0 is perfect cohesion, 1 none; null when m < 2 or no attribute is used.
 */
export function cohesion(methods: { name: string; use: ReceiverUse }[]): { lcom4: number; lcomStar: number | null } {
  const nodes = methods.filter((m) => !CONSTRUCTORS.has(m.name));
  const methodNames = new Set(methods.map((m) => m.name));
  const parent = nodes.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const union = (a: number, b: number) => {
    parent[find(a)] = find(b);
  };
  const firstUser = new Map<string, number>();
  const byName = new Map<string, number[]>();
  nodes.forEach((m, i) => byName.set(m.name, [...(byName.get(m.name) ?? []), i]));
  const usersOf = new Map<string, number>();
  nodes.forEach((m, i) => {
    for (const name of m.use.used) {
      if (methodNames.has(name)) {
        // A call (or property read) connects the caller with every definition of that name.
        for (const j of byName.get(name) ?? []) union(i, j);
        continue;
      }
      usersOf.set(name, (usersOf.get(name) ?? 0) + 1);
      const first = firstUser.get(name);
      if (first === undefined) firstUser.set(name, i);
      else union(i, first);
    }
  });
  // A property's getter and setter share a name: one method as far as cohesion goes.
  for (const list of byName.values()) for (const j of list.slice(1)) union(list[0]!, j);
  const lcom4 = new Set(nodes.map((_, i) => find(i))).size;
  const m = nodes.length;
  const a = usersOf.size;
  let lcomStar: number | null = null;
  if (m >= 2 && a > 0) {
    const mean = [...usersOf.values()].reduce((s, v) => s + v, 0) / a;
    lcomStar = Math.round(((mean - m) / (1 - m)) * 1000) / 1000;
  }
  return { lcom4, lcomStar };
}

/** Names bound by the class body itself, not methods or nested classes: its class attributes. */
export function classAttributes(cls: SyntaxNode): string[] {
  const body = cls.childForFieldName('body');
  if (!body) return [];
  return [...scopeOf(body).bindings.values()].filter((b) => b.kind === 'variable').map((b) => b.name);
}

// ---------------------------------------------------------------------------------------------
// Coupling
// ---------------------------------------------------------------------------------------------

/** Parents under which an identifier declares or imports a name rather than using one. */
const NON_REFERENCE_PARENTS = new Set(['parameters', 'lambda_parameters', 'dotted_name', 'aliased_import', 'global_statement', 'nonlocal_statement', 'function_definition', 'class_definition', 'import_prefix']);
/** Parents whose first identifier is a name being given (`f(key=v)`, `def f(a=1)`), not used. */
const NAME_FIRST_PARENTS = new Set(['keyword_argument', 'default_parameter', 'typed_default_parameter', 'typed_parameter']);

/** Statements whose `left` (after the containers) binds names. */
const BINDING_STATEMENTS = new Set(['assignment', 'augmented_assignment', 'for_statement', 'for_in_clause']);

/**
 * The names some code uses and those it binds, collected as a walk goes (the walk's root is the
 * class: its own name is not one it binds). Bound are parameters, assignment, loop, comprehension
 * and `as` targets, walrus targets, nested function and class names, imports and match captures,
 * anywhere in the code (a union over its scopes, as the reference analysis takes it); `global`
 * names are not.
 */
class NameCollector {
  /** Names in reference position (not an attribute's name, a parameter, a keyword argument's name, an import). */
  readonly names = new Set<string>();
  /** Plain dotted chains (`mod.sub.f`), spaces removed. */
  readonly chains = new Set<string>();
  private readonly bound = new Set<string>();
  private readonly globals = new Set<string>();

  constructor(private readonly text: string) {}

  /** Whether a name is bound somewhere in the code (once the walk is over). */
  binds(name: string): boolean {
    return this.bound.has(name) && !this.globals.has(name);
  }

  enter(cursor: TreeCursor, type: string, field: string | undefined, stack: readonly Frame[]): boolean {
    if (type === 'attribute') {
      const chain = this.text.slice(cursor.startIndex, cursor.endIndex);
      if (/^[A-Za-z_]\w*(\s*\.\s*[A-Za-z_]\w*)+$/.test(chain)) this.chains.add(chain.replace(/\s+/g, ''));
      return true;
    }
    if (type === 'import_statement' || type === 'import_from_statement') {
      for (const b of importBindings(cursor.currentNode).bindings) this.bound.add(b.name);
      return false;
    }
    if (type === 'global_statement') {
      for (const c of cursor.currentNode.namedChildren) if (c.type === 'identifier') this.globals.add(c.text);
      return false;
    }
    if (type !== 'identifier' || stack.length === 0) return true;
    const parent = stack[stack.length - 1]!;
    const start = cursor.startIndex;
    const name = this.text.slice(start, cursor.endIndex);
    if (this.isBinding(parent, field, start, stack)) this.bound.add(name);
    if (parent.type === 'attribute' && parent.start !== start) return false;
    if (NON_REFERENCE_PARENTS.has(parent.type)) return false;
    if (NAME_FIRST_PARENTS.has(parent.type) && parent.start === start) return false;
    this.names.add(name);
    return false;
  }

  private isBinding(parent: Frame, field: string | undefined, start: number, stack: readonly Frame[]): boolean {
    const top = stack.length - 1;
    switch (parent.type) {
      case 'parameters':
      case 'lambda_parameters':
        return true;
      case 'default_parameter':
      case 'typed_default_parameter':
      case 'typed_parameter':
        return parent.start === start;
      case 'list_splat_pattern':
      case 'dictionary_splat_pattern':
        if (['parameters', 'lambda_parameters', 'typed_parameter'].includes(stack[top - 1]?.type ?? '')) return true;
        break;
      case 'function_definition':
      case 'class_definition':
        return field === 'name' && top > 0;
      case 'named_expression':
        return field === 'name';
    }
    // Match captures: under a case pattern, anything but the parts of a dotted value pattern.
    for (let i = top; i >= 0; i--) {
      const t = stack[i]!.type;
      if (t === 'case_pattern' || t === 'keyword_pattern') return parent.type !== 'dotted_name' || stack[top - 1]?.type === 'case_pattern';
      if (t === 'case_clause' || t === 'block') break;
    }
    // Targets: through tuple and list patterns up to an assignment, a loop or an `as`.
    let f = field;
    let i = top;
    while (i >= 0 && TARGET_CONTAINERS.has(stack[i]!.type)) f = stack[i--]!.field;
    if (i < 0) return false;
    const holder = stack[i]!;
    return holder.type === 'as_pattern_target' || (BINDING_STATEMENTS.has(holder.type) && f === 'left');
  }
}

export interface ClassCode {
  /** Per method of `methods`, in that order. */
  methods: MethodMetrics[];
  receiver: ReceiverUse[];
  /** Fan-out: free names from the repository (a definition elsewhere, a module) and from elsewhere (libraries, not resolved); builtins do not count. */
  local: number;
  external: number;
  /** Repository definitions the free names and the attribute chains they head resolve to, the class's own members aside. */
  dependencies: Definition[];
  /** The classes among the dependencies (a method or class variable stands for its class), as node keys. */
  classes: Set<string>;
  /** 0-based rows where a comment starts. */
  commentRows: number[];
  /** The class's body and those of the functions in it (where docstrings are). */
  bodies: SyntaxNode[];
}

/**
 * Everything about a class that its own code tells, in one walk of it (the walks cost about as
 * much as the native calls that move the cursor): per method (`methods`: the functions defined
 * directly in the class body) its complexity (methodMetrics) and what it does through its
 * receiver (receiverUse); over the whole class, nested scopes included, the names it uses and
 * does not bind, resolved at module level for the fan-out, and with the attribute chains they
 * head (`geometry.Square`, `Other.method`) for the repository definitions it names.
 */
export function classCode(resolver: Resolver, module: ModuleInfo, cls: SyntaxNode, self: Definition, methods: readonly SyntaxNode[]): ClassCode {
  const text = module.text;
  const byStart = new Map(methods.map((m, i) => [m.startIndex, i]));
  const counters = methods.map(() => new MethodCounter());
  const collectors = methods.map((m) => {
    const c = new ReceiverCollector(m, text);
    const body = m.childForFieldName('body');
    // Only a body that mentions `self.` (or its receiver's name) has anything to collect.
    return c.receiver && body && text.slice(body.startIndex, body.endIndex).includes(`${c.receiver}.`) ? c : null;
  });
  const names = new NameCollector(text);
  const commentRows: number[] = [];
  const bodies: SyntaxNode[] = [];
  /** The method the walk is in: its index, its depth, and its body's depth once entered (-1 before, -2 after). */
  let current: { i: number; depth: number; body: number } | null = null;
  walk(
    cls,
    (cursor, type, field, stack) => {
      const depth = stack.length;
      if (!current && type === 'function_definition') {
        const i = byStart.get(cursor.startIndex);
        if (i !== undefined) current = { i, depth, body: -1 };
      } else if (current && current.body === -1 && depth === current.depth + 1 && field === 'body') current.body = depth;
      if (current && current.body >= 0 && depth >= current.body) {
        counters[current.i]!.enter(cursor, type, field);
        collectors[current.i]?.enter(cursor, type, field, stack);
      }
      if (type === 'comment') commentRows.push(cursor.startPosition.row);
      else if (field === 'body' && (stack[depth - 1]!.type === 'function_definition' || depth === 1)) bodies.push(cursor.currentNode);
      return names.enter(cursor, type, field, stack);
    },
    (frame, depth) => {
      if (!current) return;
      if (current.body >= 0 && depth >= current.body) {
        counters[current.i]!.leave(frame.type);
        if (depth === current.body) current.body = -2;
      } else if (depth === current.depth) current = null;
    },
  );

  let local = 0;
  let external = 0;
  const found = new Set<Definition>();
  for (const n of names.names) {
    if (names.binds(n)) continue;
    const t = resolver.resolveName(module, n, new Set());
    if (t.t === 'def') {
      if (t.def !== self) local++;
      found.add(t.def);
    } else if (t.t === 'module' || t.t === 'namespace') local++;
    else if (t.t === 'external' || t.t === 'unresolved') external++;
  }
  for (const chain of names.chains) {
    const [head, ...rest] = chain.split('.');
    if (names.binds(head!)) continue;
    let t = resolver.resolveName(module, head!, new Set());
    for (const part of rest) {
      if (t.t !== 'module' && t.t !== 'namespace' && t.t !== 'def') break;
      t = resolver.member$(t, part);
      if (t.t === 'def') found.add(t.def);
    }
  }
  const dependencies = [...found].filter((d) => !isInside(d, self));
  const classes = new Set<string>();
  for (const d of dependencies) {
    const c = classOf(d);
    if (c && !isInside(c, self)) classes.add(nodeKey(c.module, c.node));
  }
  return {
    methods: methods.map((m, i) => counters[i]!.result(m)),
    receiver: collectors.map((c) => c?.use ?? { used: new Set<string>(), assigned: new Set<string>() }),
    local,
    external,
    dependencies,
    classes,
    commentRows,
    bodies,
  };
}

/** Whether `def` is `cls` or lies inside it (a method, a nested class, their members). */
export function isInside(def: Definition, cls: Definition): boolean {
  for (let d: Definition | null = def; d; d = d.owner) if (d === cls || d.node.id === cls.node.id) return true;
  return false;
}

/** The class a definition belongs to for coupling: itself when a class, else its owner class. */
function classOf(def: Definition): Definition | null {
  if (def.kind === 'class') return def;
  return def.owner && def.owner.kind === 'class' ? def.owner : null;
}

export function nodeKey(module: ModuleInfo, node: SyntaxNode): string {
  return `${module.path}:${node.startIndex}`;
}

export interface ClassUse {
  /** Distinct places outside the class that name it: functions, methods, classes, a module's top level. */
  units: Set<string>;
  /** The classes those places are in. */
  classes: Set<string>;
}

/**
 * Fan-in: where the repository names each of `targets` outside the class itself, by a bare name
 * that resolves to it (through imports) or an attribute chain ending in it (`models.Cart`). Test
 * code counts: it is part of the repository. A candidate is any identifier token with a target's
 * name (found by a scan of the text); a cursor goes from one candidate to the next (up to their
 * common ancestor, down to the token), so the parts of a tree without candidates are never
 * visited. A local variable that shadows a class name is not told apart.
 */
export function classUses(repo: Repository, resolver: Resolver, targets: Definition[]): Map<Definition, ClassUse> {
  const result = new Map<Definition, ClassUse>(targets.map((t) => [t, { units: new Set(), classes: new Set() }]));
  const names = new Set(targets.map((t) => t.qualname.split('.').pop()!));
  if (names.size === 0) return result;
  // Candidates: identifier tokens that start like one of the names (most class names start
  // with a capital, which skips most of the text's identifiers), whole tokens only.
  const ascii = [...names].every((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  const firsts = [...new Set([...names].map((n) => n[0]!))].join('');
  const token = ascii ? new RegExp(`(?<![A-Za-z0-9_])[${firsts}][A-Za-z0-9_]*`, 'g') : /[\p{ID_Start}_][\p{ID_Continue}]*/gu;
  const targetSet = new Set(targets);
  const asTarget = (t: { t: string; def?: Definition }): Definition | null => (t.t === 'def' && targetSet.has(t.def!) ? t.def! : null);
  const spans = new Map(
    targets.map((t) => {
      const outer = outerNode(t.node);
      return [t, { start: outer.startIndex, end: outer.endIndex }];
    }),
  );
  for (const module of repo.modules.values()) {
    const text = module.text;
    const hits: number[] = [];
    token.lastIndex = 0;
    for (let m = token.exec(text); m; m = token.exec(text)) if (names.has(m[0])) hits.push(m.index);
    if (hits.length === 0) continue;
    const bare = new Map<string, Definition | null>();
    const dotted = new Map<string, Definition | null>();
    const cursor = module.tree.rootNode.walk();
    /** The path from the root to the cursor's node: type, field, start and end of each. */
    const path: (Frame & { end: number })[] = [{ type: 'module', field: undefined, start: 0, end: Infinity }];
    for (const hit of hits) {
      while (path.length > 1 && !(path[path.length - 1]!.start <= hit && hit < path[path.length - 1]!.end)) {
        cursor.gotoParent();
        path.pop();
      }
      while (path[path.length - 1]!.start <= hit && cursor.gotoFirstChildForIndex(hit) !== null) {
        path.push({ type: typeAt(cursor), field: fieldAt(cursor), start: cursor.startIndex, end: cursor.endIndex });
      }
      const leaf = path[path.length - 1]!;
      const parent = path[path.length - 2];
      if (leaf.type !== 'identifier' || leaf.start !== hit || !parent) continue;
      if (NON_REFERENCE_PARENTS.has(parent.type) || (NAME_FIRST_PARENTS.has(parent.type) && parent.start === hit)) continue;
      const name = text.slice(leaf.start, leaf.end);
      let target: Definition | null;
      if (parent.type === 'attribute' && parent.start !== hit) {
        // `a.b.Name`: resolved from its text when it is a plain dotted chain, else from its node.
        const chain = text.slice(parent.start, leaf.end);
        if (!dotted.has(chain)) {
          const parts = /^[A-Za-z_]\w*(\s*\.\s*[A-Za-z_]\w*)+$/.test(chain) ? chain.split('.').map((p) => p.trim()) : null;
          if (parts) {
            let t = resolver.resolveName(module, parts[0]!, new Set());
            for (const p of parts.slice(1)) t = resolver.member$(t, p);
            dotted.set(chain, asTarget(t));
          } else dotted.set(chain, asTarget(resolver.evalStatic(null, module, cursor.currentNode.parent!)));
        }
        target = dotted.get(chain)!;
      } else {
        if (!bare.has(name)) bare.set(name, asTarget(resolver.resolveName(module, name, new Set())));
        target = bare.get(name)!;
      }
      if (!target) continue;
      const outer = spans.get(target)!;
      if (target.module === module && hit >= outer.start && hit < outer.end) continue;
      const use = result.get(target)!;
      let unit: string | null = null;
      for (let i = path.length - 2; i >= 0; i--) {
        const f = path[i]!;
        if (f.type !== 'function_definition' && f.type !== 'class_definition') continue;
        unit ??= `${module.path}:${f.start}`;
        if (f.type === 'class_definition') {
          use.classes.add(`${module.path}:${f.start}`);
          break;
        }
      }
      use.units.add(unit ?? `${module.path}:<module>`);
    }
  }
  return result;
}
