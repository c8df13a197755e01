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

/**
 * The identifiers of a subtree are fetched in one native call and each is classified by its
 * parent; only attribute chains are climbed node by node. Much cheaper than visiting every node.
 */
function computeReferences(resolver: Resolver, def: Definition): References {
  const module = def.module;
  const found = new Map<Definition, true>();
  const unresolved = new Set<string>();
  const locals = new Set<string>();
  const localImports = new Map<string, Binding>();
  const localTypes = new Map<string, Definition>();
  /** Locals assigned the result of a call: typed lazily when first used. */
  const assignedCalls = new Map<string, SyntaxNode>();
  let selfName: string | null = null;
  let clsName: string | null = null;
  /** The class a method belongs to (self/cls/super resolve against it). */
  const ownerClass = def.kind === 'method' ? def.owner : null;
  /** Names a class body binds, visible by bare name in later class-body statements. */
  const classScope = def.kind === 'class' ? resolver.classMembers(def) : null;
  /**
   * A method's decorators, annotations and default values are evaluated in the class body, so
   * the class's own names are visible there (not in the method body).
   */
  let signatureScope: Map<string, Definition | 'variable'> | null = null;

  const record = (t: Value | null, text: string): void => {
    if (!t) return;
    if (t.t === 'def' && t.def !== def && t.def.node.id !== def.node.id) found.set(t.def, true);
    else if (t.t === 'instance' && t.cls !== def) found.set(t.cls, true);
    else if (t.t === 'unresolved') unresolved.add(t.name || text);
  };

  const typeOfAnnotation = (node: SyntaxNode | null): Definition | null => annotationClass(resolver, def, node);

  const resolveIdentifier = (name: string): Value | null => {
    if (locals.has(name)) {
      if (name === selfName && ownerClass) return { t: 'instance', cls: ownerClass };
      if (name === clsName && ownerClass) return { t: 'def', def: ownerClass };
      const imp = localImports.get(name);
      if (imp) {
        const t = resolver.resolveBinding(module, imp, new Set());
        record(t, name);
        return t;
      }
      const cls = localTypes.get(name);
      if (cls) return { t: 'instance', cls };
      // `v = Cls(...)`, `v = cls()`, `v = mod.Cls(...)`: evaluated on first use, once.
      const call = assignedCalls.get(name);
      if (call) {
        assignedCalls.delete(name);
        const result = callResult(resolver, evalNode(call.childForFieldName('function')));
        if (result && result.t === 'instance') {
          localTypes.set(name, result.cls);
          return result;
        }
      }
      return null;
    }
    const members = classScope ?? signatureScope;
    if (members) {
      const m = members.get(name);
      if (m) {
        // A class variable lives in the class shell; a member (method, nested class) is needed itself.
        if (m === 'variable') return ownerClass ? { t: 'def', def: ownerClass } : null;
        record({ t: 'def', def: m }, name);
        return { t: 'def', def: m };
      }
    }
    if (name === 'super') return ownerClass ? { t: 'super', cls: ownerClass } : null;
    const t = resolver.resolveName(module, name, new Set());
    record(t, name);
    return t;
  };

  const attributeOf = (base: Value | null, attr: string): Value | null => {
    if (!base) return null;
    if (base.t === 'super') {
      for (const b of resolver.baseClasses(base.cls)) {
        const m = resolver.member(b, attr, true);
        if (m) {
          record({ t: 'def', def: m }, attr);
          return { t: 'def', def: m };
        }
      }
      return null;
    }
    if (base.t === 'external' || base.t === 'builtin' || base.t === 'unresolved') return { t: 'external', name: attr };
    const m = resolver.member$(base, attr);
    if (m.t === 'def') {
      record(m, attr);
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
    if (m.t === 'unresolved') record(m, attr);
    return m;
  };

  const evalNode = (node: SyntaxNode | null): Value | null => {
    if (!node) return null;
    if (node.type === 'identifier') return resolveIdentifier(node.text);
    if (node.type === 'attribute') return attributeOf(evalNode(node.childForFieldName('object')), node.lastNamedChild!.text);
    if (node.type === 'parenthesized_expression' && node.namedChildCount === 1) return evalNode(node.firstNamedChild);
    return null;
  };

  // With postponed evaluation of annotations (PEP 563), annotations are strings at run time:
  // what they name is not needed to run the code.
  const lazyAnnotations = postponedAnnotations(module);

  /** The rest of climb() from a node object, for a chain that reaches above the scanned subtree. */
  const climbNodes = (start: SyntaxNode, startValue: Value | null): void => {
    let value = startValue;
    let node = start;
    for (;;) {
      const parent = node.parent;
      if (!parent || parent.startIndex !== node.startIndex || !value) return;
      if (parent.type === 'attribute') {
        const attr = parent.lastNamedChild;
        if (!attr || attr.id === node.id) return;
        value = attributeOf(value, attr.text);
      } else if (parent.type === 'call') {
        if (value.t !== 'super') value = callResult(resolver, value);
      } else if (parent.type !== 'parenthesized_expression') return;
      node = parent;
    }
  };

  /**
   * Every identifier of a subtree, classified by its parent, in one TreeCursor walk: node objects
   * of the binding are costly (and `parent` searches down from the root), so the walk keeps the
   * types and start offsets of the ancestors itself and reads names from the source text.
   */
  const scan = (root: SyntaxNode | null): void => {
    if (!root || (lazyAnnotations && root.type === 'type')) return;
    const text = module.text;
    // Identifiers inside annotations are skipped under postponed evaluation.
    const skipTypes = lazyAnnotations && root.text.includes(':');
    const cursor = root.walk();
    let climber: TreeCursor | null = null;
    const types: string[] = [];
    const starts: number[] = [];
    let inType = 0;
    for (;;) {
      const type = typeAt(cursor);
      if (type === 'identifier' && types.length > 0 && !(skipTypes && inType > 0)) {
        const start = cursor.startIndex;
        const end = cursor.endIndex;
        const name = text.slice(start, end);
        const top = types.length - 1;
        const pt = types[top]!;
        let reference = true;
        if (pt === 'attribute') {
          if (starts[top] !== start) {
            if (name === 'import_module') {
              const parent = cursor.currentNode.parent!;
              if (parent.parent?.type === 'call') unresolved.add(clip(parent.parent.text));
            }
            reference = false; // `.name` of an attribute: handled when its chain is climbed
          }
        } else if (NON_REFERENCE_PARENTS.has(pt)) reference = false;
        else if (NAME_FIRST_PARENTS.has(pt) && starts[top] === start) reference = false;
        if (reference) {
          if (DYNAMIC_CALLS.has(name) && pt === 'call' && !locals.has(name)) {
            const parent = cursor.currentNode.parent!;
            const args = parent.childForFieldName('arguments');
            if (!(name === 'getattr' && args && args.namedChildren[1]?.type === 'string')) unresolved.add(clip(parent.text));
          }
          // climb(): from the identifier up its chain of `.attr` and calls: `mod.Cls(...).method`.
          let value = resolveIdentifier(name);
          // Levels above the identifier the climber cursor has gone up (it starts on the identifier).
          let climbed = 0;
          for (let i = top; ; i--) {
            if (i < 0) {
              // The chain goes on above the subtree: continue with node objects.
              climbNodes(root, value);
              break;
            }
            if (starts[i] !== start || !value) break;
            const parentType = types[i]!;
            if (parentType === 'attribute') {
              if (!climber) climber = root.walk();
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
              if (!attr || (attr.start === start && attr.end === nodeEnd && attr.typeId === nodeTypeId)) break;
              value = attributeOf(value, text.slice(attr.start, attr.end));
            } else if (parentType === 'call') {
              if (value.t !== 'super') value = callResult(resolver, value);
            } else if (parentType !== 'parenthesized_expression') break;
          }
        }
      }
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
  };

  /**
   * Names bound inside a class-body or module-level statement that are not the definition's own
   * names: comprehension variables, lambda parameters, walrus targets.
   */
  const addLocals = (stmt: SyntaxNode) => {
    if (!/\bfor\b|\blambda\b|:=/.test(stmt.text)) return;
    for (const n of stmt.descendantsOfType(['for_in_clause', 'lambda_parameters', 'named_expression'])) {
      if (n.type === 'for_in_clause') for (const name of targetNames(n.childForFieldName('left'))) locals.add(name);
      else if (n.type === 'lambda_parameters') for (const name of parameterNames(n)) locals.add(name);
      else {
        const name = n.childForFieldName('name');
        if (name) locals.add(name.text);
      }
    }
  };

  const outer = def.node.parent?.type === 'decorated_definition' ? def.node.parent : null;
  const decorators = outer ? outer.namedChildren.filter((c) => c.type === 'decorator') : [];

  if (def.kind === 'function' || def.kind === 'method') {
    const params = def.node.childForFieldName('parameters');
    const names = parameterNames(params);
    const decoText = decorators.map((d) => d.text);
    if (def.kind === 'method' && !decoText.some((d) => /^@\s*staticmethod\b/.test(d)) && names.length > 0) {
      if (decoText.some((d) => /^@\s*classmethod\b/.test(d)) || /^__(new|init_subclass|class_getitem)__$/.test(def.node.childForFieldName('name')!.text)) clsName = names[0]!;
      else selfName = names[0]!;
    }
    const scope = scopeLocals(def.node);
    for (const n of scope.locals) locals.add(n);
    for (const [k, v] of scope.imports) localImports.set(k, v);
    for (const star of scope.stars) unresolved.add(star);
    // Annotated parameters and `v = LocalClass(...)` give locals a known class.
    if (params) {
      for (const p of params.namedChildren) {
        if (p.type === 'typed_parameter' || p.type === 'typed_default_parameter') {
          const name = p.type === 'typed_parameter' ? p.namedChildren.find((c) => c.type === 'identifier')?.text : p.childForFieldName('name')?.text;
          const cls = typeOfAnnotation(p.childForFieldName('type'));
          if (name && cls) localTypes.set(name, cls);
        }
      }
    }
    const body = def.node.childForFieldName('body');
    if (body && body.text.includes('=')) {
      // The assignments of a function are those of its body (parameters and annotations hold none).
      for (const a of scope.assignments) {
        const left = a.childForFieldName('left');
        if (left?.type !== 'identifier') continue;
        const right = a.childForFieldName('right');
        if (right?.type === 'call') assignedCalls.set(left.text, right);
        else {
          const cls = typeOfAnnotation(a.childForFieldName('type'));
          if (cls) localTypes.set(left.text, cls);
        }
      }
    }
    signatureScope = ownerClass ? resolver.classMembers(ownerClass) : null;
    for (const d of decorators) scan(d);
    scan(params);
    scan(def.node.childForFieldName('return_type'));
    signatureScope = null;
    scan(body);
  } else if (def.kind === 'class') {
    for (const d of decorators) scan(d);
    scan(def.node.childForFieldName('superclasses'));
    const body = def.node.childForFieldName('body');
    // Class-body statements run at definition time; methods are reached separately.
    for (let stmt = body?.firstNamedChild ?? null; stmt; stmt = stmt.nextNamedSibling) {
      if (stmt.type === 'function_definition' || stmt.type === 'class_definition') continue;
      if (stmt.type === 'decorated_definition') {
        for (const d of stmt.namedChildren) if (d.type === 'decorator') scan(d);
        continue;
      }
      addLocals(stmt);
      scan(stmt);
    }
  } else {
    addLocals(def.node);
    scan(def.node);
  }
  return { defs: [...found.keys()], unresolved: [...unresolved] };
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
