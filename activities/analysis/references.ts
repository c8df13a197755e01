/**
 * What one definition refers to: walks its code (decorators, default values, annotations, base
 * classes, body) and resolves every free name and attribute chain to a local definition when
 * it is one. Tracks the few types a static reader can know for sure: `self`/`cls`, `super()`,
 * local variables and attributes assigned an instance of a local class, annotated parameters.
 */
import { importBindings, scopeOf, targetNames, type Binding } from './bindings';
import { parameterNames } from './extract';
import type { SyntaxNode } from './parser';
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
  for (const n of root.descendantsOfType(LOCAL_BINDERS)) {
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
      case 'nonlocal_statement':
        for (const c of n.namedChildren) if (c.type === 'identifier') globals.add(c.text);
        break;
      case 'keyword_pattern':
      case 'case_pattern':
        for (const c of n.descendantsOfType('identifier')) if (c.parent?.type !== 'dotted_name' || c.parent.parent?.type === 'case_pattern') locals.add(c.text);
        break;
    }
  }
  for (const g of globals) locals.delete(g);
  return { locals, imports, stars };
}

export function referencesOf(resolver: Resolver, def: Definition): References {
  const module = def.module;
  const found = new Map<Definition, true>();
  const unresolved = new Set<string>();
  const locals = new Set<string>();
  const localImports = new Map<string, Binding>();
  const localTypes = new Map<string, Definition>();
  let selfName: string | null = null;
  let clsName: string | null = null;
  /** The class a method belongs to (self/cls/super resolve against it). */
  const ownerClass = def.kind === 'method' ? def.owner : null;
  /** Names a class body binds, visible by bare name in later class-body statements. */
  const classScope = def.kind === 'class' ? def : null;

  const record = (t: Value | null, text: string): void => {
    if (!t) return;
    if (t.t === 'def' && t.def !== def && t.def.node.id !== def.node.id) found.set(t.def, true);
    else if (t.t === 'instance' && t.cls !== def) found.set(t.cls, true);
    else if (t.t === 'unresolved') unresolved.add(t.name || text);
  };

  const typeOfAnnotation = (node: SyntaxNode | null): Definition | null => {
    if (!node) return null;
    let n: SyntaxNode | null = node.type === 'type' ? node.namedChild(0) : node;
    // Optional[C] / "C": look through one subscript or a string forward reference.
    if (n && n.type === 'subscript' && /^(typing\.)?Optional$/.test(n.childForFieldName('value')?.text ?? '')) n = n.childForFieldName('subscript');
    if (!n || (n.type !== 'identifier' && n.type !== 'attribute')) return null;
    const t = resolver.evalStatic(null, module, n);
    return t.t === 'def' && t.def.kind === 'class' ? t.def : null;
  };

  const collectLocals = (root: SyntaxNode) => {
    const scope = scopeLocals(root);
    for (const n of scope.locals) locals.add(n);
    for (const [k, v] of scope.imports) localImports.set(k, v);
    for (const star of scope.stars) unresolved.add(star);
  };

  const evalExpr = (node: SyntaxNode): Value | null => {
    switch (node.type) {
      case 'identifier': {
        const name = node.text;
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
          return cls ? { t: 'instance', cls } : null;
        }
        if (classScope) {
          const m = resolver.classMembers(classScope).get(name);
          if (m) return m === 'variable' ? null : { t: 'def', def: m };
        }
        const t = resolver.resolveName(module, name, new Set());
        record(t, name);
        return t;
      }
      case 'attribute': {
        const base = evalExpr(node.childForFieldName('object')!);
        const attr = node.childForFieldName('attribute')!.text;
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
          return m;
        }
        if (base.t === 'instance' || base.t === 'def') {
          // An attribute assigned in a method (`self.repo = Repo()`) has the type of its value.
          const cls = base.t === 'instance' ? base.cls : base.def.kind === 'class' ? base.def : null;
          const attrType = cls ? instanceAttributeType(resolver, cls, attr) : null;
          if (attrType) return { t: 'instance', cls: attrType };
          return null;
        }
        if (m.t === 'unresolved') record(m, attr);
        return m;
      }
      case 'call': {
        const fn = node.childForFieldName('function')!;
        const args = node.childForFieldName('arguments');
        const fname = fn.type === 'identifier' ? fn.text : fn.type === 'attribute' ? fn.childForFieldName('attribute')!.text : '';
        if (fname === 'super' && fn.type === 'identifier' && !locals.has('super')) {
          if (args) visit(args);
          const cls = ownerClass ?? null;
          return cls ? { t: 'super', cls } : null;
        }
        if (DYNAMIC_CALLS.has(fname) && (fn.type === 'identifier' ? !locals.has(fname) : true)) {
          if (!(fname === 'getattr' && args && args.namedChildren[1]?.type === 'string')) unresolved.add(clip(`${fn.text}(${args ? args.text.slice(1, -1) : ''})`));
        }
        const f = evalExpr(fn);
        if (args) visit(args);
        if (f && f.t === 'def' && f.def.kind === 'class') return { t: 'instance', cls: f.def };
        return null;
      }
      case 'parenthesized_expression':
        return node.namedChildCount === 1 ? evalExpr(node.namedChild(0)!) : (visit(node), null);
      default:
        visit(node);
        return null;
    }
  };

  const visitParameters = (params: SyntaxNode | null) => {
    if (!params) return;
    for (const p of params.namedChildren) {
      const value = p.childForFieldName('value');
      const type = p.childForFieldName('type') ?? p.namedChildren.find((c) => c.type === 'type') ?? null;
      if (value) visit(value);
      if (type) visit(type);
    }
  };

  const visit = (node: SyntaxNode): void => {
    switch (node.type) {
      case 'identifier':
      case 'attribute':
      case 'call':
        evalExpr(node);
        return;
      case 'comment':
      case 'import_statement':
      case 'import_from_statement':
      case 'future_import_statement':
      case 'global_statement':
      case 'nonlocal_statement':
      case 'dotted_name':
        return;
      case 'keyword_argument': {
        const v = node.childForFieldName('value');
        if (v) visit(v);
        return;
      }
      case 'string':
        for (const c of node.namedChildren) if (c.type === 'interpolation') visit(c);
        return;
      case 'function_definition':
      case 'lambda':
        visitParameters(node.childForFieldName('parameters'));
        for (const f of ['return_type', 'body']) {
          const c = node.childForFieldName(f);
          if (c) visit(c);
        }
        return;
      case 'class_definition': {
        const sup = node.childForFieldName('superclasses');
        if (sup) visit(sup);
        const body = node.childForFieldName('body');
        if (body) visit(body);
        return;
      }
      default:
        for (const c of node.namedChildren) visit(c);
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
    collectLocals(def.node);
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
    if (body) {
      for (const a of body.descendantsOfType('assignment')) {
        const left = a.childForFieldName('left');
        const right = a.childForFieldName('right');
        if (left?.type !== 'identifier' || !right) continue;
        const cls = right.type === 'call' ? classOfCall(resolver, def, right) : typeOfAnnotation(a.childForFieldName('type'));
        if (cls) localTypes.set(left.text, cls);
      }
    }
    for (const d of decorators) visit(d);
    visitParameters(params);
    const ret = def.node.childForFieldName('return_type');
    if (ret) visit(ret);
    if (body) visit(body);
  } else if (def.kind === 'class') {
    for (const d of decorators) visit(d);
    const sup = def.node.childForFieldName('superclasses');
    if (sup) visit(sup);
    const body = def.node.childForFieldName('body');
    if (body) {
      // Class-body statements run at definition time; methods are reached separately.
      for (const stmt of body.namedChildren) {
        if (stmt.type === 'function_definition' || stmt.type === 'class_definition' || stmt.type === 'decorated_definition') {
          if (stmt.type === 'decorated_definition') for (const d of stmt.namedChildren) if (d.type === 'decorator') visit(d);
          continue;
        }
        visit(stmt);
      }
    }
  } else {
    visit(def.node);
  }
  return { defs: [...found.keys()], unresolved: [...unresolved] };
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
        if (b.kind !== 'function') continue;
        for (const a of b.node.descendantsOfType('assignment')) {
          const left = a.childForFieldName('left');
          const right = a.childForFieldName('right');
          if (left?.type !== 'attribute' || left.childForFieldName('object')?.text !== 'self' || right?.type !== 'call') continue;
          const t = classOfCall(resolver, cls, right);
          if (t) types.set(left.childForFieldName('attribute')!.text, t);
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
