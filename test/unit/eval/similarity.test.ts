/** BLEU, ROUGE-L and TSED: identical code scores 1; small cases worked out by hand. */
import { seededRandom } from '../../../scripts/lib/seeded-random';
import { bleu, codeSimilarity, codeTokens, lcsLength, rougeL, syntaxTree, treeEditDistance, treeSize, tsed, type LabeledTree } from '../../../activities/eval/similarity';

const CLASS = `class Counter:
    """Counts."""

    def __init__(self, start=0):
        self.count = start  # where it starts

    def bump(self, by=1):
        if by < 0 and self.count + by < 0:
            raise ValueError("below zero")
        self.count += by
        return self.count
`;

/** f(children...) as a tree: t('f', t('a')). */
const t = (label: string, ...children: LabeledTree[]): LabeledTree => ({ label, children });

describe('code tokens', () => {
  it('are the leaves of the syntax tree, comments left out, a string literal one token', () => {
    expect(codeTokens('x = "a b"  # note\n')).toEqual(['x', '=', '"a b"']);
    expect(codeTokens('f(a, b=1)\n')).toEqual(['f', '(', 'a', ',', 'b', '=', '1', ')']);
    // An f-string with an interpolation is split into its parts.
    expect(codeTokens('f"v={v}"\n')).toEqual(['f"', 'v=', '{', 'v', '}', '"']);
  });
});

describe('BLEU', () => {
  it('is 1 for identical code', () => {
    expect(bleu(CLASS, CLASS)).toBe(1);
    expect(bleu(CLASS, CLASS, { smoothing: 'none' })).toBe(1);
  });

  it('matches hand-computed cases', () => {
    // p1 = 3/4, p2 = 2/3 (ab, bc of ab, bc, cd), equal lengths: sqrt(3/4 * 2/3) = sqrt(1/2).
    expect(bleu(['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'e'], { maxN: 2, smoothing: 'none' })).toBeCloseTo(Math.SQRT1_2, 12);
    // Add-one for n >= 2: p2 = (2 + 1) / (3 + 1) = 3/4: sqrt(3/4 * 3/4) = 3/4.
    expect(bleu(['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'e'], { maxN: 2 })).toBeCloseTo(0.75, 12);
    // Counts are clipped: four a's against one.
    expect(bleu(['a', 'a', 'a', 'a'], ['a', 'b'], { maxN: 1 })).toBe(0.25);
    // Brevity penalty: 2 tokens against 4: exp(1 - 4/2).
    expect(bleu(['a', 'b'], ['a', 'b', 'c', 'd'], { maxN: 1 })).toBeCloseTo(Math.exp(-1), 12);
    // No common token: 0; a missing 3-gram without smoothing: 0.
    expect(bleu(['x'], ['a'])).toBe(0);
    expect(bleu(['a', 'b', 'c'], ['a', 'b', 'd'], { maxN: 3, smoothing: 'none' })).toBe(0);
  });
});

describe('ROUGE-L', () => {
  it('is 1 for identical code', () => {
    expect(rougeL(CLASS, CLASS)).toEqual({ precision: 1, recall: 1, f: 1 });
  });

  it('matches hand-computed cases', () => {
    expect(lcsLength(['a', 'b', 'c', 'd'], ['a', 'c', 'b', 'd'])).toBe(3);
    expect(rougeL(['a', 'b', 'c', 'd'], ['a', 'c', 'b', 'd'])).toEqual({ precision: 0.75, recall: 0.75, f: 0.75 });
    // LCS 2 (a, c): precision 2/2, recall 2/4, F1 = 2 * 1 * 0.5 / 1.5.
    const r = rougeL(['a', 'c'], ['a', 'b', 'c', 'd']);
    expect([r.precision, r.recall]).toEqual([1, 0.5]);
    expect(r.f).toBeCloseTo(2 / 3, 12);
    expect(rougeL(['x'], ['y'])).toEqual({ precision: 0, recall: 0, f: 0 });
  });
});

describe('tree edit distance and TSED', () => {
  it("Zhang and Shasha's example: 2 edits (delete c, insert c above d)", () => {
    const a = t('f', t('d', t('a'), t('c', t('b'))), t('e'));
    const b = t('f', t('c', t('d', t('a'), t('b'))), t('e'));
    expect(treeEditDistance(a, b)).toBe(2);
    expect(treeEditDistance(b, a)).toBe(2);
    expect(treeEditDistance(a, a)).toBe(0);
    expect(treeEditDistance(t('a'), t('b'))).toBe(1);
    // Insert two leaves.
    expect(treeEditDistance(t('a'), t('a', t('b'), t('c')))).toBe(2);
  });

  it('equals the edit distance by its recursive definition on random small trees', () => {
    // The definition over forests: remove the rightmost root of either side, or match the two
    // rightmost roots (their children forests, the rest, and a rename if the labels differ).
    const size = (f: LabeledTree[]): number => f.reduce((n, x) => n + treeSize(x), 0);
    const memo = new Map<string, number>();
    const forest = (f: LabeledTree[], g: LabeledTree[]): number => {
      if (f.length === 0) return size(g);
      if (g.length === 0) return size(f);
      const key = JSON.stringify([f, g]);
      const known = memo.get(key);
      if (known !== undefined) return known;
      const v = f[f.length - 1]!;
      const w = g[g.length - 1]!;
      const d = Math.min(
        forest([...f.slice(0, -1), ...v.children], g) + 1,
        forest(f, [...g.slice(0, -1), ...w.children]) + 1,
        forest(v.children, w.children) + forest(f.slice(0, -1), g.slice(0, -1)) + (v.label === w.label ? 0 : 1),
      );
      memo.set(key, d);
      return d;
    };
    const rand = seededRandom(11);
    const randomTree = (budget: number): LabeledTree => {
      const node = t('abc'[Math.floor(rand() * 3)]!);
      let left = budget - 1;
      while (left > 0 && rand() < 0.6) {
        const sub = 1 + Math.floor(rand() * left);
        node.children.push(randomTree(sub));
        left -= sub;
      }
      return node;
    };
    for (let i = 0; i < 300; i++) {
      const a = randomTree(1 + Math.floor(rand() * 7));
      const b = randomTree(1 + Math.floor(rand() * 7));
      expect([i, treeEditDistance(a, b)]).toEqual([i, forest([a], [b])]);
    }
  });

  it('compares syntax trees of named nodes and operators', () => {
    expect(syntaxTree('x = 1\n')).toEqual(t('module', t('expression_statement', t('assignment', t('identifier:x'), t('integer:1')))));
    // One rename of five nodes.
    expect(tsed('x = 1\n', 'x = 2\n')).toEqual({ distance: 1, similarity: 0.8, nodes: [5, 5] });
    // Operators are leaves: `+` renamed to `-`, one of six nodes.
    const ops = tsed('a + b\n', 'a - b\n')!;
    expect([ops.distance, ops.nodes]).toEqual([1, [6, 6]]);
    expect(ops.similarity).toBeCloseTo(5 / 6, 12);
    // Comments do not count.
    expect(tsed('x = 1  # one\n', 'x = 1\n')!.similarity).toBe(1);
    expect(tsed(CLASS, CLASS)!.similarity).toBe(1);
    // Floored at 0.
    expect(tsed('x\n', CLASS)!.similarity).toBeGreaterThanOrEqual(0);
    expect(treeSize(syntaxTree(CLASS))).toBeGreaterThan(40);
  });

  it('all three on a class with one method wrong are below 1 and above 0', () => {
    const wrong = CLASS.replace('self.count += by', 'self.count -= by');
    const s = codeSimilarity(wrong, CLASS);
    expect(s.bleu).toBeGreaterThan(0.8);
    expect(s.bleu).toBeLessThan(1);
    expect(s.rougeL.f).toBeGreaterThan(0.9);
    expect(s.rougeL.f).toBeLessThan(1);
    // `+=` and `-=` are operators of an augmented assignment: one rename.
    expect(s.tsed!.distance).toBe(1);
    expect(codeSimilarity(CLASS, CLASS)).toEqual({ bleu: 1, rougeL: { precision: 1, recall: 1, f: 1 }, tsed: { distance: 0, similarity: 1, nodes: expect.any(Array) } });
  });
});
