/**
 * The transitive closure of local definitions a target needs, breadth-first so that every
 * definition carries its distance from the target (used to cut the context farthest-first).
 */
import { referencesOf } from './references';
import type { Definition, Resolver } from './resolver';

export interface DependencyClosure {
  /** In discovery order (non-decreasing distance); the target itself is not included. */
  defs: Definition[];
  distance: Map<Definition, number>;
  /** Edges: definition -> the definitions it needs (for ordering files). */
  edges: Map<Definition, Definition[]>;
  unresolved: string[];
}

/** Members that make a class usable when it is instantiated or subclassed. */
const CONSTRUCTORS = ['__init__', '__new__', '__post_init__'];

export function dependencyClosure(resolver: Resolver, target: Definition): DependencyClosure {
  return closureFrom(resolver, [target]);
}

/** The breadth-first closure from `roots` (all at distance 0; none of them is in `defs`). */
function closureFrom(resolver: Resolver, roots: Definition[]): DependencyClosure {
  const distance = new Map<Definition, number>(roots.map((r) => [r, 0]));
  const edges = new Map<Definition, Definition[]>();
  const unresolved = new Set<string>();
  const order: Definition[] = [];
  const queue: Definition[] = [...roots];
  for (let i = 0; i < queue.length; i++) {
    const def = queue[i]!;
    const d = distance.get(def)!;
    const refs = referencesOf(resolver, def);
    for (const u of refs.unresolved) unresolved.add(u);
    const needs: Definition[] = [...refs.defs];
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
      distance.set(n, d + 1);
      order.push(n);
      queue.push(n);
    }
  }
  // Distances of same-distance additions can be smaller than their discovery position implies.
  order.sort((a, b) => distance.get(a)! - distance.get(b)!);
  return { defs: order, distance, edges, unresolved: [...unresolved].sort() };
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
export function classDependencyClosure(resolver: Resolver, cls: Definition): DependencyClosure & { parts: Definition[] } {
  const parts = classParts(resolver, cls);
  return { ...closureFrom(resolver, [cls, ...parts]), parts };
}
