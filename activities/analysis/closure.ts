/**
 * What a definition's code names beyond what Python needs to run it: the local definitions its
 * annotations name (string annotations and postponed ones included), the strings of type
 * aliases and TypeVars (`Union["Message", int]`, `TypeVar("T", bound="Base")`), and the
 * definitions its dynamic lookups can reach by name (`getattr(self, "handle_" + kind)`,
 * `globals()[name]`, a table of handlers by name). A reader of the context needs them even when
 * the interpreter does not; dependencies.ts follows them for the context closure.
 */
import type { SyntaxNode } from './parser';
import type { Definition, Resolver, Target } from './resolver';
import type { DynamicLookup } from './types';

export type { DynamicLookup };
type DynamicKind = DynamicLookup['kind'];

export interface ContextReferences {
  defs: Definition[];
  dynamic: DynamicLookup[];
  /** Names in annotations and alias strings that resolve to nothing (not local, not a library, not builtin). */
  unresolved: string[];
}

/** Subscripted names whose arguments are types (strings in them are forward references). */
const TYPE_GENERICS = new Set([
  'Optional', 'Union', 'List', 'Dict', 'Set', 'FrozenSet', 'Tuple', 'Type', 'Callable', 'Sequence', 'MutableSequence',
  'Mapping', 'MutableMapping', 'Iterable', 'Iterator', 'AsyncIterable', 'AsyncIterator', 'Generator', 'AsyncGenerator',
  'Awaitable', 'Coroutine', 'ClassVar', 'Final', 'Annotated', 'Generic', 'Protocol', 'TypeGuard', 'TypeIs', 'Required',
  'NotRequired', 'ReadOnly', 'Self', 'DefaultDict', 'OrderedDict', 'Counter', 'Deque', 'ChainMap', 'list', 'dict', 'set',
  'frozenset', 'tuple', 'type',
]);

/** Calls whose string arguments name types. */
const TYPE_CALLS = new Set(['TypeVar', 'cast', 'NewType', 'ForwardRef', 'TypeAliasType', 'ParamSpec']);

const IMPORT_CALLS = new Set(['importlib.import_module', 'import_module', '__import__']);

/** At most this many definitions reached by one lookup's prefix (a short prefix can match a whole class). */
const MAX_REACHED = 40;

const cache = new WeakMap<Definition, ContextReferences>();

export function contextReferencesOf(resolver: Resolver, def: Definition): ContextReferences {
  let refs = cache.get(def);
  if (!refs) cache.set(def, (refs = new ContextCollector(resolver, def).collect()));
  return refs;
}

function clip(text: string, max = 80): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

/** A plain string literal's content (null for an f-string or a concatenation). */
function stringContent(node: SyntaxNode): string | null {
  if (node.type !== 'string' || node.namedChildren.some((c) => c.type === 'interpolation')) return null;
  const m = /^[a-zA-Z]*('''|"""|'|")([\s\S]*)\1$/.exec(node.text);
  return m ? m[2]! : null;
}

/** What a computed name starts with: `'handle_' + x`, `f"handle_{x}"`, `'handle_%s' % x`, `'handle_{}'.format(x)`. */
export function namePrefix(node: SyntaxNode | null): string {
  if (!node) return '';
  if (node.type === 'parenthesized_expression' && node.namedChildCount === 1) return namePrefix(node.firstNamedChild);
  if (node.type === 'binary_operator') {
    const left = node.childForFieldName('left');
    const op = node.childForFieldName('operator')?.text;
    if (left && op === '+') return stringContent(left) ?? namePrefix(left);
    if (left && op === '%') return (stringContent(left) ?? '').split('%')[0]!;
    return '';
  }
  if (node.type === 'string') {
    const m = /^[a-zA-Z]*('''|"""|'|")([^{]*)/.exec(node.text);
    return m ? m[2]! : '';
  }
  if (node.type === 'call') {
    const fn = node.childForFieldName('function');
    if (fn?.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'format') {
      const obj = fn.childForFieldName('object');
      return obj ? (stringContent(obj) ?? '').split('{')[0]! : '';
    }
  }
  return '';
}

function lastName(node: SyntaxNode | null): string {
  if (!node) return '';
  return node.text.split('.').pop()!.trim();
}

class ContextCollector {
  private readonly found = new Set<Definition>();
  private readonly dynamic: DynamicLookup[] = [];
  private readonly unresolved = new Set<string>();
  /** The class `self`/`cls` stand for in this definition's code. */
  private readonly ownClass: Definition | null;

  constructor(
    private readonly resolver: Resolver,
    private readonly def: Definition,
  ) {
    this.ownClass = def.kind === 'method' ? def.owner : def.kind === 'class' ? def : null;
  }

  collect(): ContextReferences {
    const { def } = this;
    const outer = def.node.parent?.type === 'decorated_definition' ? def.node.parent : def.node;
    if (def.kind === 'class') {
      // The class's own statements: decorators, bases, class-body statements (methods are definitions of their own).
      for (const c of outer.namedChildren) if (c.type === 'decorator') this.visit(c, false);
      const bases = def.node.childForFieldName('superclasses');
      if (bases) this.visit(bases, true);
      for (let stmt = def.node.childForFieldName('body')?.firstNamedChild ?? null; stmt; stmt = stmt.nextNamedSibling) {
        if (stmt.type === 'function_definition' || stmt.type === 'class_definition') continue;
        if (stmt.type === 'decorated_definition') {
          for (const d of stmt.namedChildren) if (d.type === 'decorator') this.visit(d, false);
          continue;
        }
        this.visit(stmt, false);
      }
    } else {
      this.visit(outer, false);
    }
    this.found.delete(def);
    return { defs: [...this.found], dynamic: this.dynamic, unresolved: [...this.unresolved].sort() };
  }

  private add(t: Target | null): void {
    if (!t) return;
    if (t.t === 'def') this.found.add(t.def);
    else if (t.t === 'instance') this.found.add(t.cls);
  }

  /** A dotted name written in a string (`"Message"`, `"mod.Message"`, `"Optional[Message]"`). */
  private resolveText(text: string): void {
    for (const m of text.matchAll(/[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*/g)) {
      const parts = m[0].split('.');
      let t = this.resolver.resolveName(this.def.module, parts[0]!, new Set());
      if (t.t === 'unresolved') {
        this.unresolved.add(parts[0]!);
        continue;
      }
      for (const p of parts.slice(1)) t = this.resolver.member$(t, p);
      this.add(t);
    }
  }

  /**
   * Walks a subtree. `typed`: inside an annotation or a base-class list, where every name and
   * string names a type; strings elsewhere count only as arguments of a typing generic or call.
   */
  private visit(node: SyntaxNode, typed: boolean, strings = typed): void {
    switch (node.type) {
      case 'type':
        for (const c of node.namedChildren) this.visit(c, true, true);
        return;
      case 'identifier':
        if (typed && !(node.parent?.type === 'keyword_argument' && node.parent.childForFieldName('name')?.id === node.id)) this.add(this.resolver.evalStatic(null, this.def.module, node));
        return;
      case 'attribute':
        if (typed) {
          this.add(this.resolver.evalStatic(null, this.def.module, node));
          return;
        }
        break;
      case 'string': {
        const text = strings ? stringContent(node) : null;
        if (text !== null && /^\s*[A-Za-z_][\w.\[\], |]*\s*$/.test(text)) this.resolveText(text);
        if (strings || node.namedChildCount === 0) return;
        break;
      }
      case 'subscript': {
        const value = node.childForFieldName('value');
        const name = lastName(value);
        if (name === 'Literal') return;
        if (value) this.visit(value, typed, strings);
        const generic = typed || TYPE_GENERICS.has(name);
        for (const c of node.childrenForFieldName('subscript')) this.visit(c, typed, generic);
        if (!typed) this.globalsLookup(node);
        return;
      }
      case 'call':
        this.callLookup(node);
        if (TYPE_CALLS.has(lastName(node.childForFieldName('function')))) {
          const fn = node.childForFieldName('function');
          if (fn) this.visit(fn, typed, strings);
          const args = node.childForFieldName('arguments');
          for (const a of args?.namedChildren ?? []) this.visit(a, typed, true);
          return;
        }
        break;
      case 'dictionary':
        this.tableLookup(node);
        break;
    }
    for (const c of node.namedChildren) this.visit(c, typed, typed ? strings : false);
  }

  private record(kind: DynamicKind, node: SyntaxNode, prefix: string, reached: Definition[]): void {
    for (const d of reached) this.found.add(d);
    this.dynamic.push({ kind, path: this.def.module.path, line: node.startPosition.row + 1, code: clip(node.text), prefix, reaches: reached.map((d) => d.qualname) });
  }

  /** Definitions of a class (along its local bases) or a module whose name starts with `prefix`. */
  private byPrefix(owner: { cls: Definition } | { module: Definition['module'] }, prefix: string, exact: boolean): Definition[] {
    const out: Definition[] = [];
    const seenNames = new Set<string>();
    const take = (name: string, d: Definition | null) => {
      if (!d || seenNames.has(name) || out.length >= MAX_REACHED) return;
      if (exact ? name !== prefix : !name.startsWith(prefix)) return;
      seenNames.add(name);
      out.push(d);
    };
    if ('cls' in owner) {
      const visit = (cls: Definition, seen: Set<Definition>) => {
        if (seen.has(cls)) return;
        seen.add(cls);
        for (const [name, m] of this.resolver.classMembers(cls)) take(name, m === 'variable' ? cls : m);
        for (const b of this.resolver.baseClasses(cls)) visit(b, seen);
      };
      visit(owner.cls, new Set());
    } else {
      for (const [name, b] of this.resolver.scope(owner.module).bindings) {
        if (b.kind !== 'function' && b.kind !== 'class') continue;
        const t = this.resolver.resolveBinding(owner.module, b, new Set());
        take(name, t.t === 'def' ? t.def : null);
      }
    }
    return out;
  }

  /** Where `getattr`'s object looks names up: the own class for self/cls, a local class or module. */
  private lookupOwner(obj: SyntaxNode): { cls: Definition } | { module: Definition['module'] } | null {
    if ((obj.text === 'self' || obj.text === 'cls') && this.ownClass) return { cls: this.ownClass };
    if (obj.type !== 'identifier' && obj.type !== 'attribute') return null;
    const t = this.resolver.evalStatic(null, this.def.module, obj);
    if (t.t === 'def' && t.def.kind === 'class') return { cls: t.def };
    if (t.t === 'instance') return { cls: t.cls };
    if (t.t === 'module') return { module: t.module };
    return null;
  }

  private callLookup(call: SyntaxNode): void {
    const fn = call.childForFieldName('function');
    const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a) => a.type !== 'comment');
    if (!fn) return;
    if (fn.type === 'identifier' && fn.text === 'getattr' && args.length >= 2) {
      const owner = this.lookupOwner(args[0]!);
      const exact = stringContent(args[1]!);
      if (exact !== null) {
        // A literal name is a plain reference written another way: followed, not reported.
        if (owner) for (const d of this.byPrefix(owner, exact, true)) this.found.add(d);
        return;
      }
      const prefix = namePrefix(args[1]!);
      this.record('getattr', call, prefix, owner && prefix ? this.byPrefix(owner, prefix, false) : []);
      return;
    }
    // globals().get(name)
    if (fn.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'get' && isGlobalsCall(fn.childForFieldName('object'))) {
      const prefix = namePrefix(args[0] ?? null);
      this.record('globals', call, prefix, prefix ? this.byPrefix({ module: this.def.module }, prefix, false) : []);
      return;
    }
    if (IMPORT_CALLS.has(fn.text.replace(/\s+/g, ''))) this.record('import', call, namePrefix(args[0] ?? null) || (args[0] ? stringContent(args[0]) ?? '' : ''), []);
  }

  /** globals()[name] */
  private globalsLookup(sub: SyntaxNode): void {
    if (!isGlobalsCall(sub.childForFieldName('value'))) return;
    const key = sub.childrenForFieldName('subscript')[0] ?? null;
    const exact = key ? stringContent(key) : null;
    if (exact !== null) {
      for (const d of this.byPrefix({ module: this.def.module }, exact, true)) this.found.add(d);
      return;
    }
    const prefix = namePrefix(key);
    this.record('globals', sub, prefix, prefix ? this.byPrefix({ module: this.def.module }, prefix, false) : []);
  }

  /** `{"add": do_add, "sub": self.do_sub}`: a table of local callables by name. */
  private tableLookup(dict: SyntaxNode): void {
    const pairs = dict.namedChildren.filter((c) => c.type !== 'comment');
    if (pairs.length < 2 || !pairs.every((p) => p.type === 'pair')) return;
    const reached: Definition[] = [];
    for (const p of pairs) {
      const key = p.childForFieldName('key');
      const value = p.childForFieldName('value');
      if (!key || stringContent(key) === null || !value) return;
      let t: Target | null = null;
      if (value.type === 'attribute' && (value.childForFieldName('object')?.text === 'self' || value.childForFieldName('object')?.text === 'cls') && this.ownClass) {
        const m = this.resolver.member(this.ownClass, value.childForFieldName('attribute')!.text, true);
        t = m ? { t: 'def', def: m } : null;
      } else if (value.type === 'identifier' || value.type === 'attribute') t = this.resolver.evalStatic(null, this.def.module, value);
      if (!t || t.t !== 'def' || (t.def.kind !== 'function' && t.def.kind !== 'method' && t.def.kind !== 'class')) return;
      reached.push(t.def);
    }
    this.record('table', dict, '', reached);
  }
}

function isGlobalsCall(node: SyntaxNode | null): boolean {
  if (!node || node.type !== 'call') return false;
  const fn = node.childForFieldName('function');
  return fn?.type === 'identifier' && (fn.text === 'globals' || fn.text === 'vars') && (node.childForFieldName('arguments')?.namedChildCount ?? 0) === 0;
}
