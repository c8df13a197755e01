/**
 * Name resolution across a repository: imports (absolute, relative, aliased, package
 * re-exports, `import a.b.c`), module-level names, class members along local base classes.
 * Everything is cached per repository; resolution never guesses: what it cannot pin to a local
 * definition is external (a library), builtin, or reported as unresolved.
 */
import { scopeOf, type Binding, type Scope } from './bindings';
import type { SyntaxNode } from './parser';
import type { ModuleInfo, Repository } from './repository';
import { lastCodeRow, outerNode } from './syntax';
import type { DefinitionKind } from './types';

export const BUILTINS = new Set(
  `ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError
BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError
ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning
EnvironmentError Exception ExceptionGroup False FileExistsError FileNotFoundError FloatingPointError
FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError InterruptedError
IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError ModuleNotFoundError NameError None
NotADirectoryError NotImplemented NotImplementedError OSError OverflowError PendingDeprecationWarning
PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning
StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError True
TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError
UnicodeWarning UserWarning ValueError Warning ZeroDivisionError __build_class__ __debug__ __doc__ __import__
__loader__ __name__ __package__ __spec__ __file__ __path__ __builtins__ __annotations__ __dict__ __class__
__qualname__ __module__ abs aiter all anext any ascii bin bool breakpoint bytearray bytes
callable chr classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit
filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter
len license list locals map max memoryview min next object oct open ord pow print property quit range repr
reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip reveal_type`.split(/\s+/),
);

/** A local definition: a module-level function, class or variable, a method, or a nested class. */
export interface Definition {
  module: ModuleInfo;
  qualname: string;
  kind: DefinitionKind;
  /** function_definition / class_definition node, or the statement that assigns a variable. */
  node: SyntaxNode;
  /** For methods and nested classes: the class that contains them. */
  owner: Definition | null;
  /** 1-based inclusive span (decorators included). */
  startLine: number;
  endLine: number;
}

export type Target =
  | { t: 'module'; module: ModuleInfo }
  | { t: 'namespace'; key: string }
  | { t: 'def'; def: Definition }
  | { t: 'instance'; cls: Definition }
  | { t: 'external'; name: string }
  | { t: 'builtin'; name: string }
  | { t: 'unresolved'; name: string };

export class Resolver {
  private scopes = new Map<string, Scope>();
  private defs = new Map<string, Definition>();
  private members = new Map<string, Map<string, Definition | 'variable'>>();
  private bases = new Map<Definition, Definition[]>();
  private moduleCache = new Map<string, ModuleInfo | { key: string } | null>();
  private roots: string[];

  /**
   * @param rootPackageNames names under which the root folder itself is imported when it is a
   *   package (has `__init__.py`): its folder name, the repository's name.
   */
  constructor(
    readonly repo: Repository,
    private readonly rootPackageNames: string[] = [],
  ) {
    // Directories Python could have on sys.path: the root and conventional source folders
    // (a directory with __init__.py is a package, never a root).
    const roots = [''];
    for (const dir of [...repo.dirs].sort()) {
      const base = dir.split('/').pop()!;
      if ((base === 'src' || base === 'lib' || base === 'python') && !repo.byKey.has(dir)) roots.push(dir);
    }
    this.roots = roots;
  }

  scope(module: ModuleInfo): Scope {
    let s = this.scopes.get(module.path);
    if (!s) this.scopes.set(module.path, (s = scopeOf(module.tree.rootNode)));
    return s;
  }

  /** The stable Definition object for a node, so that identity comparisons work. */
  definition(module: ModuleInfo, qualname: string, kind: DefinitionKind, node: SyntaxNode, owner: Definition | null): Definition {
    const key = `${module.path}::${qualname}`;
    let d = this.defs.get(key);
    if (!d) {
      const outer = kind === 'variable' ? node : outerNode(node);
      const end = kind === 'variable' ? node.endPosition.row : lastCodeRow(node);
      d = { module, qualname, kind, node, owner, startLine: outer.startPosition.row + 1, endLine: end + 1 };
      this.defs.set(key, d);
    }
    return d;
  }

  private findModule(key: string): ModuleInfo | { key: string } | null {
    const m = this.repo.byKey.get(key);
    if (m) return m;
    if (key && this.repo.dirs.has(key)) return { key };
    return null;
  }

  /** Resolves `import x.y` / `from ..x import` to a module, a namespace directory, or null (external). */
  resolveModule(from: ModuleInfo, level: number, dotted: string): ModuleInfo | { key: string } | null {
    const cacheKey = `${from.key}|${from.isPackage}|${level}|${dotted}`;
    if (this.moduleCache.has(cacheKey)) return this.moduleCache.get(cacheKey)!;
    let result: ModuleInfo | { key: string } | null = null;
    const rel = dotted ? dotted.split('.').join('/') : '';
    if (level > 0) {
      const parts = from.key ? from.key.split('/') : [];
      if (!from.isPackage) parts.pop();
      for (let i = 1; i < level; i++) parts.pop();
      const key = [...parts, ...(rel ? [rel] : [])].join('/');
      result = key === '' && !rel ? this.repo.byKey.get('') ?? { key: '' } : this.findModule(key);
    } else if (rel) {
      // sys.path candidates: the importing script's folders (when not inside a package), then
      // the root and conventional source folders.
      const candidates: string[] = [];
      const parts = from.path.split('/').slice(0, -1);
      for (let i = parts.length; i > 0; i--) {
        const dir = parts.slice(0, i).join('/');
        if (!this.repo.byKey.has(dir)) candidates.push(dir);
      }
      for (const r of this.roots) if (!candidates.includes(r)) candidates.push(r);
      for (const dir of candidates) {
        const found = this.findModule(dir ? `${dir}/${rel}` : rel);
        if (found) {
          result = found;
          break;
        }
      }
      // `import mypkg.util` from inside a repository whose root folder is the package mypkg.
      const [first, ...rest] = rel.split('/');
      if (!result && this.repo.byKey.has('') && this.rootPackageNames.includes(first!)) {
        result = rest.length ? this.findModule(rest.join('/')) : this.repo.byKey.get('')!;
      }
    }
    this.moduleCache.set(cacheKey, result);
    return result;
  }

  private moduleTarget(m: ModuleInfo | { key: string }): Target {
    return 'tree' in m ? { t: 'module', module: m } : { t: 'namespace', key: m.key };
  }

  /** A module-level name of `module`. */
  resolveName(module: ModuleInfo, name: string, seen: Set<string>): Target {
    const visitKey = `${module.path}:${name}`;
    if (seen.has(visitKey)) return { t: 'unresolved', name };
    seen.add(visitKey);
    const scope = this.scope(module);
    const b = scope.bindings.get(name);
    if (b) return this.resolveBinding(module, b, seen);
    for (const star of scope.starImports) {
      const src = this.resolveModule(module, star.level, star.module);
      if (src && 'tree' in src) {
        const exported = this.scope(src).all;
        if (exported ? exported.includes(name) : !name.startsWith('_')) {
          const r = this.resolveName(src, name, seen);
          if (r.t !== 'unresolved') return r;
        }
      }
    }
    if (BUILTINS.has(name)) return { t: 'builtin', name };
    // A package's submodule is reachable as an attribute once imported anywhere.
    if (module.isPackage) {
      const sub = this.findModule(module.key ? `${module.key}/${name}` : name);
      if (sub) return this.moduleTarget(sub);
    }
    // Possibly from a library's star import: reported, not guessed.
    const externalStar = scope.starImports.find((s) => !this.resolveModule(module, s.level, s.module));
    if (externalStar) return { t: 'unresolved', name: `${name} (star import from ${'.'.repeat(externalStar.level)}${externalStar.module}?)` };
    return { t: 'unresolved', name };
  }

  resolveBinding(module: ModuleInfo, b: Binding, seen: Set<string>): Target {
    switch (b.kind) {
      case 'function':
        return { t: 'def', def: this.definition(module, b.name, 'function', b.node, null) };
      case 'class':
        return { t: 'def', def: this.definition(module, b.name, 'class', b.node, null) };
      case 'variable':
        return { t: 'def', def: this.definition(module, b.name, 'variable', b.node, null) };
      case 'import': {
        if (b.member === null) {
          const m = this.resolveModule(module, b.level, b.module);
          return m ? this.moduleTarget(m) : { t: 'external', name: b.module };
        }
        const src = this.resolveModule(module, b.level, b.module);
        if (!src) return { t: 'external', name: `${b.module}.${b.member}` };
        return this.member$(this.moduleTarget(src), b.member, seen);
      }
    }
  }

  /** Attribute access on a resolved value. */
  member$(base: Target, attr: string, seen: Set<string> = new Set()): Target {
    switch (base.t) {
      case 'module': {
        const r = this.resolveName(base.module, attr, seen);
        if (r.t !== 'unresolved' && r.t !== 'builtin') return r;
        const sub = this.findModule(base.module.key ? `${base.module.key}/${attr}` : attr);
        if (sub) return this.moduleTarget(sub);
        return { t: 'unresolved', name: `${base.module.key.replace(/\//g, '.')}.${attr}` };
      }
      case 'namespace': {
        const sub = this.findModule(base.key ? `${base.key}/${attr}` : attr);
        return sub ? this.moduleTarget(sub) : { t: 'unresolved', name: `${base.key.replace(/\//g, '.')}.${attr}` };
      }
      case 'def': {
        if (base.def.kind !== 'class') return { t: 'external', name: attr };
        const m = this.member(base.def, attr, true);
        if (m) return { t: 'def', def: m };
        return { t: 'external', name: attr };
      }
      case 'instance': {
        const m = this.member(base.cls, attr, true);
        if (m) return { t: 'def', def: m };
        return { t: 'external', name: attr };
      }
      case 'external':
        return { t: 'external', name: `${base.name}.${attr}` };
      default:
        return { t: 'external', name: attr };
    }
  }

  /** Members defined in a class body: methods and nested classes; class variables map to 'variable'. */
  classMembers(cls: Definition): Map<string, Definition | 'variable'> {
    const key = `${cls.module.path}::${cls.qualname}`;
    let m = this.members.get(key);
    if (m) return m;
    m = new Map();
    const body = cls.node.childForFieldName('body');
    if (body) {
      const scope = scopeOf(body);
      for (const [name, b] of scope.bindings) {
        if (b.kind === 'function' || b.kind === 'class') {
          const kind = b.kind === 'function' ? 'method' : 'class';
          m.set(name, this.definition(cls.module, `${cls.qualname}.${name}`, kind, b.node, cls));
        } else {
          m.set(name, 'variable');
        }
      }
    }
    this.members.set(key, m);
    return m;
  }

  /** Local base classes of a class, in declaration order. */
  baseClasses(cls: Definition): Definition[] {
    const cached = this.bases.get(cls);
    if (cached) return cached;
    const out: Definition[] = [];
    // Set before resolving so that a cyclic hierarchy (class A(B), class B(A)) terminates.
    this.bases.set(cls, out);
    const bases = cls.node.childForFieldName('superclasses');
    if (!bases) return out;
    for (const b of bases.namedChildren) {
      if (b.type === 'keyword_argument' || b.type === 'comment') continue;
      const t = this.evalStatic(cls.owner ? cls.owner : null, cls.module, b);
      if (t.t === 'def' && t.def.kind === 'class' && t.def !== cls) out.push(t.def);
    }
    return out;
  }

  /**
   * A member along the method resolution order (depth-first over local bases, which matches
   * the C3 order for the usual single-inheritance and mixin cases). A class variable resolves to
   * the class that defines it: its body is rendered with the class.
   */
  member(cls: Definition, name: string, inherited: boolean, seen = new Set<Definition>()): Definition | null {
    if (seen.has(cls)) return null;
    seen.add(cls);
    const own = this.classMembers(cls).get(name);
    if (own === 'variable') return cls;
    if (own) return own;
    if (!inherited) return null;
    for (const base of this.baseClasses(cls)) {
      const found = this.member(base, name, true, seen);
      if (found) return found;
    }
    return null;
  }

  /** Evaluates a name or dotted attribute chain at module level (base classes, decorators). */
  evalStatic(owner: Definition | null, module: ModuleInfo, node: SyntaxNode): Target {
    if (node.type === 'identifier') {
      if (owner) {
        // Inside a class body, earlier members of that body are visible by bare name.
        const m = this.classMembers(owner).get(node.text);
        if (m && m !== 'variable') return { t: 'def', def: m };
      }
      return this.resolveName(module, node.text, new Set());
    }
    if (node.type === 'attribute') {
      const base = this.evalStatic(owner, module, node.childForFieldName('object')!);
      return this.member$(base, node.childForFieldName('attribute')!.text);
    }
    if (node.type === 'call') {
      const f = this.evalStatic(owner, module, node.childForFieldName('function')!);
      return f.t === 'def' && f.def.kind === 'class' ? { t: 'instance', cls: f.def } : { t: 'external', name: node.text };
    }
    if (node.type === 'subscript') return this.evalStatic(owner, module, node.childForFieldName('value')!);
    return { t: 'external', name: node.text };
  }
}

