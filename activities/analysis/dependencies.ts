/**
 * The transitive closure of local definitions a target needs, breadth-first so that every
 * definition carries its distance from the target (used to cut the context farthest-first).
 * With `context` set it is the context closure: besides what the code needs to run, what its
 * annotations, alias strings and dynamic lookups name (closure.ts), so that what the context
 * shows names nothing it leaves out; `depth` bounds the distance.
 */
import { contextReferencesOf, type DynamicLookup } from './closure';
import { referencesOf } from './references';
import type { Definition, Resolver } from './resolver';

export interface ClosureOptions {
  /** Follow annotations, alias strings and dynamic lookups too (closure.ts). */
  context: boolean;
  /** The farthest distance followed (0: no limit). */
  depth: number;
}

const RUNTIME_ONLY: ClosureOptions = { context: false, depth: 0 };

export interface DependencyClosure {
  /** In discovery order (non-decreasing distance); the target itself is not included. */
  defs: Definition[];
  distance: Map<Definition, number>;
  /** Edges: definition -> the definitions it needs (for ordering files). */
  edges: Map<Definition, Definition[]>;
  unresolved: string[];
  /** Names looked up at run time in the closure's code (context closures only). */
  dynamic: DynamicLookup[];
  /** Definitions needed beyond the depth limit, nearest first: not followed, not in `defs`. */
  beyondDepth: Definition[];
  /** Of `defs`, those only annotations, alias strings or dynamic lookups lead to (nothing that runs needs them). */
  contextOnly: Set<Definition>;
  /** Distances along what runs needs alone (the others' distances can be shorter through an annotation). */
  runtimeDistance: Map<Definition, number>;
}

/** Members that make a class usable when it is instantiated or subclassed. */
const CONSTRUCTORS = ['__init__', '__new__', '__post_init__'];

export function dependencyClosure(resolver: Resolver, target: Definition, options: ClosureOptions = RUNTIME_ONLY): DependencyClosure {
  return closureFrom(resolver, [target], options);
}

/** The breadth-first closure from `roots` (all at distance 0; none of them is in `defs`). */
function closureFrom(resolver: Resolver, roots: Definition[], options: ClosureOptions): DependencyClosure {
  const distance = new Map<Definition, number>(roots.map((r) => [r, 0]));
  const edges = new Map<Definition, Definition[]>();
  const unresolved = new Set<string>();
  const order: Definition[] = [];
  const queue: Definition[] = [...roots];
  const dynamic: DynamicLookup[] = [];
  const beyond = new Set<Definition>();
  for (let i = 0; i < queue.length; i++) {
    const def = queue[i]!;
    const d = distance.get(def)!;
    const refs = referencesOf(resolver, def);
    for (const u of refs.unresolved) unresolved.add(u);
    const needs: Definition[] = [...refs.defs];
    if (options.context) {
      const more = contextReferencesOf(resolver, def);
      for (const n of more.defs) if (!needs.includes(n)) needs.push(n);
      dynamic.push(...more.dynamic);
    }
    // A method or nested class cannot exist without the class around it; a class needs its
    // constructors to be instantiated. These come at the same distance as what implies them.
    const sameDistance: Definition[] = [];
    if (def.owner) sameDistance.push(def.owner);
    if (def.kind === 'class') {
      for (const name of CONSTRUCTORS) {
        const m = resolver.classMembers(def).get(name);
        if (m && m !== 'variable') sameDistance.push(m);
      }
    }
    edges.set(def, [...needs, ...sameDistance]);
    for (const n of sameDistance) {
      if (distance.has(n)) continue;
      distance.set(n, Math.max(d, 1));
      order.push(n);
      queue.push(n);
    }
    for (const n of needs) {
      if (distance.has(n)) continue;
      if (options.depth > 0 && d + 1 > options.depth) {
        beyond.add(n);
        continue;
      }
      distance.set(n, d + 1);
      order.push(n);
      queue.push(n);
    }
  }
  // Distances of same-distance additions can be smaller than their discovery position implies.
  order.sort((a, b) => distance.get(a)! - distance.get(b)!);
  // What runs needs, at its own distances: the closure without the context's edges.
  const runtime = options.context ? closureFrom(resolver, roots, { context: false, depth: options.depth }) : null;
  const contextOnly = new Set(runtime ? order.filter((d) => !runtime.distance.has(d)) : []);
  return { defs: order, distance, edges, unresolved: [...unresolved].sort(), dynamic, beyondDepth: [...beyond].filter((b) => !distance.has(b)), contextOnly, runtimeDistance: runtime ? runtime.distance : distance };
}

/** A class and everything defined in its body (methods, nested classes and their members). */
export function classParts(resolver: Resolver, cls: Definition): Definition[] {
  const out: Definition[] = [];
  for (const m of resolver.classMembers(cls).values()) {
    if (m === 'variable') continue;
    out.push(m);
    if (m.kind === 'class') out.push(...classParts(resolver, m));
  }
  return out;
}

/**
 * The closure of a whole class: what any of its parts needs (its body's own references, every
 * method's, every nested class's), breadth-first from all of them at once. The class's own parts
 * are the target, not dependencies: they are left out of `defs` (their edges are kept, for
 * ordering files).
 */
export function classDependencyClosure(resolver: Resolver, cls: Definition, options: ClosureOptions = RUNTIME_ONLY): DependencyClosure & { parts: Definition[] } {
  const parts = classParts(resolver, cls);
  return { ...closureFrom(resolver, [cls, ...parts], options), parts };
}
