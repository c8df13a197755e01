/**
 * A stratified, seeded sample of the corpus: up to N classes per documentation level (as
 * OpenClassGen's evaluation draws 100 per level). Each class is ranked by a hash of the seed and
 * its id, and the N lowest ranks of each level are kept: the same seed gives the same sample
 * whatever the order the classes come in, and adding repositories only ever swaps members for
 * lower-ranked ones. Holds at most N records per level.
 */
import { createHash } from 'node:crypto';
import { DOCUMENTATION_LEVELS, type ClassRecord, type DocumentationLevel } from './record';

export function sampleRank(seed: number, id: string): string {
  return createHash('sha256').update(`${seed}:${id}`).digest('hex');
}

export class StratifiedSample {
  private readonly kept = new Map<DocumentationLevel, { rank: string; record: ClassRecord }[]>(DOCUMENTATION_LEVELS.map((l) => [l, []]));

  constructor(
    readonly perLevel: number,
    readonly seed: number,
  ) {}

  offer(record: ClassRecord): void {
    if (this.perLevel <= 0) return;
    const list = this.kept.get(record.documentation_level)!;
    const rank = sampleRank(this.seed, record.id);
    if (list.length >= this.perLevel && rank >= list[list.length - 1]!.rank) return;
    let i = list.length;
    while (i > 0 && list[i - 1]!.rank > rank) i--;
    list.splice(i, 0, { rank, record });
    if (list.length > this.perLevel) list.pop();
  }

  /** Level by level (full, partial, none), lowest rank first. */
  records(): ClassRecord[] {
    return DOCUMENTATION_LEVELS.flatMap((l) => this.kept.get(l)!.map((x) => x.record));
  }

  counts(): Record<DocumentationLevel, number> {
    return Object.fromEntries(DOCUMENTATION_LEVELS.map((l) => [l, this.kept.get(l)!.length])) as Record<DocumentationLevel, number>;
  }
}
