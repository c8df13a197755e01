/**
 * What one definition refers to: walks its code (decorators, default values, annotations, base
 * classes, body) and resolves every free name and attribute chain to a local definition when
 * it is one. Tracks the types a static reader can know for sure: `self`/`cls`, `super()`,
 * locals and attributes assigned an instance of a local class (directly or through a return
 * annotation), annotated parameters and attributes, property reads.
 */
import { importBindings, scopeOf, targetNames, type Binding } from './bindings';
import { parameterNames } from './extract';
import type { SyntaxNode, TreeCursor } from './parser';
import { typeAt } from './syntax';
import type { Definition, Resolver, Target } from './resolver';

export interface References {
  defs: Definition[];
  unresolved: string[];
}

type Value = Target | { t: 'super'; cls: Definition };

const LOCAL_BINDERS = [
  'assignment',
  'augmented_assignment',
  'for_statement',
  'for_in_clause',
  'as_pattern_target',
  'named_expression',
  'function_definition',
  'class_definition',
  'parameters',
  'lambda_parameters',
  'import_statement',
  'import_from_statement',
  'global_statement',
  'nonlocal_statement',
  'keyword_pattern',
  'case_pattern',
];

const LOCAL_BINDER_TYPES = new Set(LOCAL_BINDERS);

const DYNAMIC_CALLS = new Set(['getattr', '__import__', 'eval', 'exec', 'import_module', 'globals', 'locals', 'vars']);

function clip(text: string, max = 60): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

export interface LocalNames {
  /** Every name bound inside the subtree (parameters, assignments, loop and `as` targets, nested defs, imports). */
  locals: Set<string>;
  imports: Map<string, Binding>;
  /** Star imports inside the subtree (unresolvable by construction). */
  stars: string[];
  /** The assignment statements of the subtree in source order (nested scopes included). */
  assignments: SyntaxNode[];
}

/**
 * Names bound anywhere inside a function (nested scopes included: a union is enough to tell a
 * free name from a local one in all but contrived code). `global` declarations are removed.
 */
export function scopeLocals(root: SyntaxNode): LocalNames {
  const locals = new Set<string>();
  const imports = new Map<string, Binding>();
  const stars: string[] = [];
  const globals = new Set<string>();
  const assignments: SyntaxNode[] = [];
  // A cursor walk visiting the binders in the same (pre-)order as descendantsOfType, whose
  // per-call cost (matching every type name against the whole grammar) dominated small subtrees.
  const cursor = root.walk();
  let depth = 0;
  for (;;) {
    if (LOCAL_BINDER_TYPES.has(typeAt(cursor))) bindersIn(cursor.currentNode);
    if (cursor.gotoFirstChild()) {
      depth++;
      continue;
    }
    while (depth > 0 && !cursor.gotoNextSibling()) {
      cursor.gotoParent();
      depth--;
    }
    if (depth === 0) break;
  }
  for (const g of globals) locals.delete(g);
  return { locals, imports, stars, assignments };

  function bindersIn(n: SyntaxNode): void {
    if (n.type === 'assignment') assignments.push(n);
    switch (n.type) {
      case 'assignment':
      case 'augmented_assignment':
      case 'for_statement':
      case 'for_in_clause':
        for (const name of targetNames(n.childForFieldName('left'))) locals.add(name);
        break;
      case 'as_pattern_target':
        for (const name of targetNames(n)) locals.add(name);
        break;
      case 'named_expression': {
        const name = n.childForFieldName('name');
        if (name) locals.add(name.text);
        break;
      }
      case 'function_definition':
      case 'class_definition':
        if (n.id !== root.id) {
          const name = n.childForFieldName('name');
          if (name) locals.add(name.text);
        }
        break;
      case 'parameters':
      case 'lambda_parameters':
        for (const name of parameterNames(n)) locals.add(name);
        break;
      case 'import_statement':
      case 'import_from_statement': {
        const { bindings, star } = importBindings(n);
        for (const b of bindings) {
          locals.add(b.name);
          imports.set(b.name, b);
        }
        if (star) stars.push(`* from ${'.'.repeat(star.level)}${star.module}`);
        break;
      }
      case 'global_statement':
        // `nonlocal` names stay local: they are bound by an enclosing function inside the subtree.
        for (const c of n.namedChildren) if (c.type === 'identifier') globals.add(c.text);
        break;
      case 'keyword_pattern':
      case 'case_pattern':
        for (const c of n.descendantsOfType('identifier')) if (c.parent?.type !== 'dotted_name' || c.parent.parent?.type === 'case_pattern') locals.add(c.text);
        break;
    }
  }
}

/** References depend only on the definition, never on the target being analysed: computed once. */
const referenceCache = new WeakMap<Definition, References>();

export function referencesOf(resolver: Resolver, def: Definition): References {
  let cached = referenceCache.get(def);
  if (!cached) referenceCache.set(def, (cached = computeReferences(resolver, def)));
  return cached;
}

/** Parents under which an identifier is a name being declared or imported, not a reference. */
const NON_REFERENCE_PARENTS = new Set([
  'parameters',
  'lambda_parameters',
  'dotted_name',
  'aliased_import',
  'global_statement',
  'nonlocal_statement',
  'function_definition',
  'class_definition',
  'import_prefix',
]);

/** Identifier positions that name something only when they come first in their parent. */
const NAME_FIRST_PARENTS = new Set(['keyword_argument', 'default_parameter', 'typed_default_parameter', 'typed_parameter']);

function computeReferences(resolver: Resolver, def: Definition): References {
  return new ReferenceCollector(resolver, def).collect();
}

/**
 * One definition's references, gathered in named steps:
 *   1. what the definition binds itself (`bindFunctionScope`: self/cls, its locals and their
 *      known classes), or the names a class-body or module statement binds (`bindStatementLocals`);
 *   2. the code Python runs for it, in the scope it runs in (`collect`: decorators, signature and
 *      body of a function; decorators, bases and body statements of a class; a module statement);
 *   3. each identifier found there (`scan`), resolved (`resolveIdentifier`) and followed up its
 *      chain of attributes and calls (`followChain`), each local definition reached recorded.
 */
class ReferenceCollector {
  private readonly module: Definition['module'];
  private readonly found = new Map<Definition, true>();
  private readonly unresolved = new Set<string>();
  private readonly locals = new Set<string>();
  private readonly localImports = new Map<string, Binding>();
  private readonly localTypes = new Map<string, Definition>();
  /** Locals assigned the result of a call: typed lazily when first used. */
  private readonly assignedCalls = new Map<string, SyntaxNode>();
  private selfName: string | null = null;
  private clsName: string | null = null;
  /** The class a method belongs to (self/cls/super resolve against it). */
  private readonly ownerClass: Definition | null;
  /** Names a class body binds, visible by bare name in later class-body statements. */
  private readonly classScope: Map<string, Definition | 'variable'> | null;
  /**
   * A method's decorators, annotations and default values are evaluated in the class body, so
   * the class's own names are visible there (not in the method body).
   */
  private signatureScope: Map<string, Definition | 'variable'> | null = null;
  /**
   * With postponed evaluation of annotations (PEP 563), annotations are strings at run time:
   * what they name is not needed to run the code.
   */
  private readonly lazyAnnotations: boolean;

  constructor(
    private readonly resolver: Resolver,
    private readonly def: Definition,
  ) {
    this.module = def.module;
    this.ownerClass = def.kind === 'method' ? def.owner : null;
    this.classScope = def.kind === 'class' ? resolver.classMembers(def) : null;
    this.lazyAnnotations = postponedAnnotations(def.module);
  }

  collect(): References {
    const { def } = this;
    const outer = def.node.parent?.type === 'decorated_definition' ? def.node.parent : null;
    const decorators = outer ? outer.namedChildren.filter((c) => c.type === 'decorator') : [];
    if (def.kind === 'function' || def.kind === 'method') {
      const params = def.node.childForFieldName('parameters');
      const body = def.node.childForFieldName('body');
      this.bindFunctionScope(params, body, decorators);
      // Decorators, parameters (defaults, annotations) and the return annotation run where the
      // function is defined; the body runs in the function's own scope.
      this.signatureScope = this.ownerClass ? this.resolver.classMembers(this.ownerClass) : null;
      for (const d of decorators) this.scan(d);
      this.scan(params);
      this.scan(def.node.childForFieldName('return_type'));
      this.signatureScope = null;
      this.scan(body);
    } else if (def.kind === 'class') {
      for (const d of decorators) this.scan(d);
      this.scan(def.node.childForFieldName('superclasses'));
      const body = def.node.childForFieldName('body');
      // Class-body statements run at definition time; methods are reached separately.
      for (let stmt = body?.firstNamedChild ?? null; stmt; stmt = stmt.nextNamedSibling) {
        if (stmt.type === 'function_definition' || stmt.type === 'class_definition') continue;
        if (stmt.type === 'decorated_definition') {
          for (const d of stmt.namedChildren) if (d.type === 'decorator') this.scan(d);
          continue;
        }
        this.bindStatementLocals(stmt);
        this.scan(stmt);
      }
    } else {
      this.bindStatementLocals(def.node);
      this.scan(def.node);
    }
    return { defs: [...this.found.keys()], unresolved: [...this.unresolved] };
  }

  // Step 1: what the definition binds. ---------------------------------------------------------

  /** A function's own names: `self`/`cls`, its locals and imports, and the locals whose class is known. */
  private bindFunctionScope(params: SyntaxNode | null, body: SyntaxNode | null, decorators: SyntaxNode[]): void {
    const { def } = this;
    const names = parameterNames(params);
    const decoText = decorators.map((d) => d.text);
    if (def.kind === 'method' && !decoText.some((d) => /^@\s*staticmethod\b/.test(d)) && names.length > 0) {
      if (decoText.some((d) => /^@\s*classmethod\b/.test(d)) || /^__(new|init_subclass|class_getitem)__$/.test(def.node.childForFieldName('name')!.text)) this.clsName = names[0]!;
      else this.selfName = names[0]!;
    }
    const scope = scopeLocals(def.node);
    for (const n of scope.locals) this.locals.add(n);
    for (const [k, v] of scope.imports) this.localImports.set(k, v);
    for (const star of scope.stars) this.unresolved.add(star);
    // Annotated parameters and `v = LocalClass(...)` give locals a known class.
    if (params) for (const [name, cls] of annotatedParameters(this.resolver, def, def.node)) this.localTypes.set(name, cls);
    if (body && body.text.includes('=')) {
      // The assignments of a function are those of its body (parameters and annotations hold none).
      for (const a of scope.assignments) {
        const left = a.childForFieldName('left');
        if (left?.type !== 'identifier') continue;
        const right = a.childForFieldName('right');
        if (right?.type === 'call') this.assignedCalls.set(left.text, right);
        else {
          const cls = annotationClass(this.resolver, def, a.childForFieldName('type'));
          if (cls) this.localTypes.set(left.text, cls);
        }
      }
    }
  }

  /**
   * Names bound inside a class-body or module-level statement that are not the definition's own
   * names: comprehension variables, lambda parameters, walrus targets.
   */
  private bindStatementLocals(stmt: SyntaxNode): void {
    if (!/\bfor\b|\blambda\b|:=/.test(stmt.text)) return;
    for (const n of stmt.descendantsOfType(['for_in_clause', 'lambda_parameters', 'named_expression'])) {
      if (n.type === 'for_in_clause') for (const name of targetNames(n.childForFieldName('left'))) this.locals.add(name);
      else if (n.type === 'lambda_parameters') for (const name of parameterNames(n)) this.locals.add(name);
      else {
        const name = n.childForFieldName('name');
        if (name) this.locals.add(name.text);
      }
    }
  }

  // Step 3: resolving what an identifier and its chain name. ------------------------------------

  /** Keeps a local definition the code needs, or an unresolved name. */
  private record(t: Value | null, text: string): void {
    if (!t) return;
    const { def } = this;
    if (t.t === 'def' && t.def !== def && t.def.node.id !== def.node.id) this.found.set(t.def, true);
    else if (t.t === 'instance' && t.cls !== def) this.found.set(t.cls, true);
    else if (t.t === 'unresolved') this.unresolved.add(t.name || text);
  }

  /** What a bare name refers to here: a local (self, cls, a local import, a typed local), a class-body name, `super`, or a module-level name. */
  private resolveIdentifier(name: string): Value | null {
    const { resolver, ownerClass } = this;
    if (this.locals.has(name)) {
      if (name === this.selfName && ownerClass) return { t: 'instance', cls: ownerClass };
      if (name === this.clsName && ownerClass) return { t: 'def', def: ownerClass };
      const imp = this.localImports.get(name);
      if (imp) {
        const t = resolver.resolveBinding(this.module, imp, new Set());
        this.record(t, name);
        return t;
      }
      const cls = this.localTypes.get(name);
      if (cls) return { t: 'instance', cls };
      // `v = Cls(...)`, `v = cls()`, `v = mod.Cls(...)`: evaluated on first use, once.
      const call = this.assignedCalls.get(name);
      if (call) {
        this.assignedCalls.delete(name);
        const result = callResult(resolver, this.evalNode(call.childForFieldName('function')));
        if (result && result.t === 'instance') {
          this.localTypes.set(name, result.cls);
          return result;
        }
      }
      return null;
    }
    const members = this.classScope ?? this.signatureScope;
    if (members) {
      const m = members.get(name);
      if (m) {
        // A class variable lives in the class shell; a member (method, nested class) is needed itself.
        if (m === 'variable') return ownerClass ? { t: 'def', def: ownerClass } : null;
        this.record({ t: 'def', def: m }, name);
        return { t: 'def', def: m };
      }
    }
    if (name === 'super') return ownerClass ? { t: 'super', cls: ownerClass } : null;
    const t = resolver.resolveName(this.module, name, new Set());
    this.record(t, name);
    return t;
  }

  /** What `.attr` of a value refers to: a member (a property read gives its return type), an attribute assigned an instance, or something external. */
  private attributeOf(base: Value | null, attr: string): Value | null {
    const { resolver } = this;
    if (!base) return null;
    if (base.t === 'super') {
      for (const b of resolver.baseClasses(base.cls)) {
        const m = resolver.member(b, attr, true);
        if (m) {
          this.record({ t: 'def', def: m }, attr);
          return { t: 'def', def: m };
        }
      }
      return null;
    }
    if (base.t === 'external' || base.t === 'builtin' || base.t === 'unresolved') return { t: 'external', name: attr };
    const m = resolver.member$(base, attr);
    if (m.t === 'def') {
      this.record(m, attr);
      // Reading a property on an instance runs it: its value has the property's return type.
      if (base.t === 'instance' && m.def.kind === 'method' && isProperty(m.def)) return callResult(resolver, m);
      return m;
    }
    if (base.t === 'instance' || base.t === 'def') {
      // An attribute assigned in a method (`self.repo = Repo()`) has the type of its value.
      const cls = base.t === 'instance' ? base.cls : base.def.kind === 'class' ? base.def : null;
      const attrType = cls ? instanceAttributeType(resolver, cls, attr) : null;
      return attrType ? { t: 'instance', cls: attrType } : null;
    }
    if (m.t === 'unresolved') this.record(m, attr);
    return m;
  }

  /** The value of a name, an attribute chain or a parenthesized one. */
  private evalNode(node: SyntaxNode | null): Value | null {
    if (!node) return null;
    if (node.type === 'identifier') return this.resolveIdentifier(node.text);
    if (node.type === 'attribute') return this.attributeOf(this.evalNode(node.childForFieldName('object')), node.lastNamedChild!.text);
    if (node.type === 'parenthesized_expression' && node.namedChildCount === 1) return this.evalNode(node.firstNamedChild);
    return null;
  }

  // Step 2: every identifier of the code that runs. --------------------------------------------

  /**
   * Every identifier of a subtree, classified by its parent, in one TreeCursor walk: node objects
   * of the binding are costly (and `parent` searches down from the root), so the walk keeps the
   * types and start offsets of the ancestors itself and reads names from the source text.
   */
  private scan(root: SyntaxNode | null): void {
    if (!root || (this.lazyAnnotations && root.type === 'type')) return;
    const walk: ScanWalk = { root, text: this.module.text, cursor: root.walk(), climber: null, types: [], starts: [] };
    const { cursor, types, starts } = walk;
    // Identifiers inside annotations are skipped under postponed evaluation.
    const skipTypes = this.lazyAnnotations && root.text.includes(':');
    let inType = 0;
    for (;;) {
      const type = typeAt(cursor);
      if (type === 'identifier' && types.length > 0 && !(skipTypes && inType > 0)) this.visitIdentifier(walk);
      const nodeStart = type === 'identifier' ? -1 : cursor.startIndex;
      if (type !== 'identifier' && cursor.gotoFirstChild()) {
        types.push(type);
        starts.push(nodeStart);
        if (type === 'type') inType++;
        continue;
      }
      let done = false;
      while (!cursor.gotoNextSibling()) {
        if (types.length === 0) {
          done = true;
          break;
        }
        cursor.gotoParent();
        starts.pop();
        if (types.pop() === 'type') inType--;
      }
      if (done) break;
    }
  }

  /** The identifier under the walk's cursor: a reference is resolved and followed up its chain; a dynamic lookup is noted. */
  private visitIdentifier(walk: ScanWalk): void {
    const { cursor, types, starts } = walk;
    const start = cursor.startIndex;
    const name = walk.text.slice(start, cursor.endIndex);
    const top = types.length - 1;
    const pt = types[top]!;
    if (pt === 'attribute' && starts[top] !== start) {
      // `.name` of an attribute: handled when its chain is climbed.
      if (name === 'import_module') {
        const parent = cursor.currentNode.parent!;
        if (parent.parent?.type === 'call') this.unresolved.add(clip(parent.parent.text));
      }
      return;
    }
    if (pt !== 'attribute' && (NON_REFERENCE_PARENTS.has(pt) || (NAME_FIRST_PARENTS.has(pt) && starts[top] === start))) return;
    if (DYNAMIC_CALLS.has(name) && pt === 'call' && !this.locals.has(name)) {
      const parent = cursor.currentNode.parent!;
      const args = parent.childForFieldName('arguments');
      if (!(name === 'getattr' && args && args.namedChildren[1]?.type === 'string')) this.unresolved.add(clip(parent.text));
    }
    this.followChain(walk, this.resolveIdentifier(name));
  }

  /**
   * From the identifier up its chain of `.attr` and calls (`mod.Cls(...).method`), each link
   * resolved from the one before. The ancestors the walk keeps say where the chain goes; the
   * climber cursor reads each attribute's name.
   */
  private followChain(walk: ScanWalk, resolved: Value | null): void {
    const { cursor, types, starts, text } = walk;
    const start = cursor.startIndex;
    const top = types.length - 1;
    let value = resolved;
    // Levels above the identifier the climber cursor has gone up (it starts on the identifier).
    let climbed = 0;
    for (let i = top; ; i--) {
      if (i < 0) {
        // The chain goes on above the subtree: continue with node objects.
        this.followChainAbove(walk.root, value);
        return;
      }
      if (starts[i] !== start || !value) return;
      const parentType = types[i]!;
      if (parentType === 'attribute') {
        const climber = (walk.climber ??= walk.root.walk());
        if (climbed === 0) climber.resetTo(cursor);
        while (climbed < top - i) {
          climber.gotoParent();
          climbed++;
        }
        // On the chain's node: the attribute's name is its last named child, unless that is this node.
        const nodeEnd = climber.endIndex;
        const nodeTypeId = climber.nodeTypeId;
        climber.gotoParent();
        climbed++;
        let attr: { start: number; end: number; typeId: number } | null = null;
        if (climber.gotoLastChild()) {
          do {
            if (climber.nodeIsNamed) {
              attr = { start: climber.startIndex, end: climber.endIndex, typeId: climber.nodeTypeId };
              break;
            }
          } while (climber.gotoPreviousSibling());
          climber.gotoParent();
        }
        if (!attr || (attr.start === start && attr.end === nodeEnd && attr.typeId === nodeTypeId)) return;
        value = this.attributeOf(value, text.slice(attr.start, attr.end));
      } else if (parentType === 'call') {
        if (value.t !== 'super') value = callResult(this.resolver, value);
      } else if (parentType !== 'parenthesized_expression') return;
    }
  }

  /** The rest of a chain from a node object, for a chain that reaches above the scanned subtree. */
  private followChainAbove(start: SyntaxNode, startValue: Value | null): void {
    let value = startValue;
    let node = start;
    for (;;) {
      const parent = node.parent;
      if (!parent || parent.startIndex !== node.startIndex || !value) return;
      if (parent.type === 'attribute') {
        const attr = parent.lastNamedChild;
        if (!attr || attr.id === node.id) return;
        value = this.attributeOf(value, attr.text);
      } else if (parent.type === 'call') {
        if (value.t !== 'super') value = callResult(this.resolver, value);
      } else if (parent.type !== 'parenthesized_expression') return;
      node = parent;
    }
  }
}

/** A scan's cursor and the ancestors' types and start offsets it keeps on the way down. */
interface ScanWalk {
  root: SyntaxNode;
  text: string;
  cursor: TreeCursor;
  /** A second cursor, made on first need, that climbs attribute chains. */
  climber: TreeCursor | null;
  types: string[];
  starts: number[];
}

function isProperty(def: Definition): boolean {
  const outer = def.node.parent;
  if (!outer || outer.type !== 'decorated_definition') return false;
  return outer.namedChildren.some((d) => d.type === 'decorator' && /^@\s*(property|(functools\.)?cached_property)\s*$/.test(d.text));
}

const postponed = new WeakMap<Definition['module'], boolean>();

function postponedAnnotations(module: Definition['module']): boolean {
  let v = postponed.get(module);
  if (v === undefined) postponed.set(module, (v = /^from\s+__future__\s+import\s[^\n]*\bannotations\b/m.test(module.text)));
  return v;
}

function classOfCall(resolver: Resolver, def: Definition, call: SyntaxNode): Definition | null {
  const fn = call.childForFieldName('function')!;
  if (fn.type !== 'identifier' && fn.type !== 'attribute') return null;
  const t = resolver.evalStatic(null, def.module, fn);
  return t.t === 'def' && t.def.kind === 'class' ? t.def : null;
}

const attributeTypes = new WeakMap<Definition, Map<string, Definition>>();

/** `self.<attr> = LocalClass(...)` anywhere in the class's methods (or its local bases). */
export function instanceAttributeType(resolver: Resolver, cls: Definition, attr: string, seen = new Set<Definition>()): Definition | null {
  if (seen.has(cls)) return null;
  seen.add(cls);
  let types = attributeTypes.get(cls);
  if (!types) {
    types = new Map();
    attributeTypes.set(cls, types);
    const body = cls.node.childForFieldName('body');
    if (body) {
      for (const b of scopeOf(body).bindings.values()) {
        if (b.kind !== 'function' || !b.node.text.includes('self.')) continue;
        const paramTypes = annotatedParameters(resolver, cls, b.node);
        for (const a of b.node.descendantsOfType('assignment')) {
          const left = a.childForFieldName('left');
          if (left?.type !== 'attribute' || left.childForFieldName('object')?.text !== 'self') continue;
          const name = left.childForFieldName('attribute')!.text;
          const annotated = a.childForFieldName('type');
          const t = (annotated && annotationClass(resolver, cls, annotated)) || valueClass(resolver, cls, a.childForFieldName('right'), paramTypes);
          if (t && !types.has(name)) types.set(name, t);
        }
      }
    }
  }
  const own = types.get(attr);
  if (own) return own;
  for (const base of resolver.baseClasses(cls)) {
    const t = instanceAttributeType(resolver, base, attr, seen);
    if (t) return t;
  }
  return null;
}

/** The local class an annotation names (`C`, `mod.C`, `Optional[C]`, `C | None`), or null. */
export function annotationClass(resolver: Resolver, context: Definition, node: SyntaxNode | null): Definition | null {
  let n: SyntaxNode | null = node && node.type === 'type' ? node.firstNamedChild : node;
  if (n && n.type === 'subscript' && /^(typing\.|t\.)?Optional$/.test(n.childForFieldName('value')?.text ?? '')) n = n.childForFieldName('subscript');
  if (n && n.type === 'binary_operator' && n.lastNamedChild?.text === 'None') n = n.firstNamedChild;
  if (n && n.type === 'string') {
    // A forward reference: "C" or "mod.C".
    const inner = n.text.replace(/^[a-zA-Z]*(['"])(.*)\1$/, '$2');
    if (!/^[A-Za-z_][\w.]*$/.test(inner)) return null;
    const parts = inner.split('.');
    let t = resolver.resolveName(context.module, parts[0]!, new Set());
    for (const p of parts.slice(1)) t = resolver.member$(t, p);
    return t.t === 'def' && t.def.kind === 'class' ? t.def : null;
  }
  if (!n || (n.type !== 'identifier' && n.type !== 'attribute')) return null;
  const t = resolver.evalStatic(null, context.module, n);
  return t.t === 'def' && t.def.kind === 'class' ? t.def : null;
}

function annotatedParameters(resolver: Resolver, context: Definition, fn: SyntaxNode): Map<string, Definition> {
  const out = new Map<string, Definition>();
  const params = fn.childForFieldName('parameters');
  for (const p of params?.namedChildren ?? []) {
    if (p.type !== 'typed_parameter' && p.type !== 'typed_default_parameter') continue;
    const name = p.type === 'typed_parameter' ? p.namedChildren.find((c) => c.type === 'identifier')?.text : p.childForFieldName('name')?.text;
    const cls = annotationClass(resolver, context, p.childForFieldName('type'));
    if (name && cls) out.set(name, cls);
  }
  return out;
}

/** The local class of a value: `C(...)`, an annotated parameter, or either side of `a or C()`. */
function valueClass(resolver: Resolver, context: Definition, node: SyntaxNode | null, params: Map<string, Definition>): Definition | null {
  if (!node) return null;
  if (node.type === 'call') return classOfCall(resolver, context, node);
  if (node.type === 'identifier') return params.get(node.text) ?? null;
  if (node.type === 'boolean_operator' || node.type === 'conditional_expression') {
    for (const c of node.namedChildren) {
      const t = valueClass(resolver, context, c, params);
      if (t) return t;
    }
  }
  return null;
}

/** What calling a value gives: an instance of a local class, directly or by return annotation. */
function callResult(resolver: Resolver, callee: Value | null): Value | null {
  if (!callee || callee.t !== 'def') return null;
  if (callee.def.kind === 'class') return { t: 'instance', cls: callee.def };
  if (callee.def.kind === 'function' || callee.def.kind === 'method') {
    const cls = annotationClass(resolver, callee.def.owner ?? callee.def, callee.def.node.childForFieldName('return_type'));
    return cls ? { t: 'instance', cls } : null;
  }
  return null;
}
