/**
 * Similarity of generated code to a reference that needs no model (OpenClassGen's syntactic and
 * structural measures): BLEU over code tokens, ROUGE-L, and a tree edit distance over tree-sitter
 * syntax trees normalised to a similarity (TSED). Identical code scores 1 on all three.
 *
 * - Code tokens are the leaves of the tree-sitter tree, comments left out and each string literal
 *   one token (an f-string with interpolations is split into its parts). Generated code need not
 *   parse: tree-sitter recovers from errors and the tokens of what it recovered count.
 * - BLEU (Papineni et al.): the geometric mean of the clipped n-gram precisions for n = 1..maxN
 *   (default 4; OpenClassGen uses n <= 3: `maxN: 3`) times the brevity penalty (1 when the
 *   candidate is longer than the reference, else exp(1 - r/c)). With `smoothing: 'add-one'`
 *   (the default) the precisions for n >= 2 add one to their matches and their total (Lin and
 *   Och's smoothed BLEU), so one missing 4-gram does not zero a whole class; 'none' is Papineni's.
 * - ROUGE-L (Lin): from the longest common subsequence of the token sequences, precision
 *   LCS/|candidate|, recall LCS/|reference| and their F-measure (beta 1 by default; OpenClassGen
 *   reports the recall).
 * - TSED (Song et al.): the Zhang-Shasha tree edit distance (insert, delete and rename cost 1)
 *   between the syntax trees, as 1 - distance / max(nodes), floored at 0. The trees hold the
 *   named nodes (labelled by type, leaves by type and text, a string literal as one leaf) and the
 *   operator tokens (`+`, `==`, `and`, ...), which tree-sitter keeps unnamed; punctuation and
 *   keywords are implied by the node types; comments are left out.
 */
import { createPythonParser, parseText, type PythonParser, type SyntaxNode } from '../python-parser';

let parser: PythonParser | null = null;

function parse(source: string): SyntaxNode {
  parser ??= createPythonParser();
  return parseText(parser, source).rootNode;
}

/** A string literal without interpolations: one token, one leaf. */
function isPlainString(node: SyntaxNode): boolean {
  return node.type === 'string' && !node.namedChildren.some((c) => c.type === 'interpolation');
}

/** The code tokens of a source (see the module comment). */
export function codeTokens(source: string): string[] {
  const out: string[] = [];
  // An explicit stack: generated code can nest deeply.
  const stack: SyntaxNode[] = [parse(source)];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === 'comment') continue;
    if (node.childCount === 0 || isPlainString(node)) {
      if (node.text) out.push(node.text);
      continue;
    }
    for (let i = node.childCount - 1; i >= 0; i--) stack.push(node.child(i)!);
  }
  return out;
}

const tokensOf = (x: string | readonly string[]): readonly string[] => (typeof x === 'string' ? codeTokens(x) : x);

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = tokens.slice(i, i + n).join('\u0000');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface BleuOptions {
  maxN?: number;
  smoothing?: 'add-one' | 'none';
}

/** BLEU of a candidate against one reference, sources or token lists (see the module comment). */
export function bleu(candidate: string | readonly string[], reference: string | readonly string[], options: BleuOptions = {}): number {
  const maxN = options.maxN ?? 4;
  const smoothing = options.smoothing ?? 'add-one';
  const c = tokensOf(candidate);
  const r = tokensOf(reference);
  if (c.length === 0 || r.length === 0) return c.length === r.length ? 1 : 0;
  let logSum = 0;
  for (let n = 1; n <= maxN; n++) {
    const cand = ngramCounts(c, n);
    const ref = ngramCounts(r, n);
    let matches = 0;
    let total = 0;
    for (const [gram, count] of cand) {
      total += count;
      matches += Math.min(count, ref.get(gram) ?? 0);
    }
    if (smoothing === 'add-one' && n >= 2) {
      matches++;
      total++;
    }
    if (matches === 0 || total === 0) return 0;
    logSum += Math.log(matches / total) / maxN;
  }
  const brevity = c.length > r.length ? 1 : Math.exp(1 - r.length / c.length);
  return brevity * Math.exp(logSum);
}

/** Length of the longest common subsequence (two rows of the table at a time). */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  let prev = new Uint32Array(b.length + 1);
  let row = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const x = a[i - 1];
    for (let j = 1; j <= b.length; j++) row[j] = x === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    [prev, row] = [row, prev];
  }
  return prev[b.length]!;
}

export interface RougeL {
  precision: number;
  recall: number;
  f: number;
}

/** ROUGE-L of a candidate against a reference, sources or token lists. */
export function rougeL(candidate: string | readonly string[], reference: string | readonly string[], beta = 1): RougeL {
  const c = tokensOf(candidate);
  const r = tokensOf(reference);
  if (c.length === 0 && r.length === 0) return { precision: 1, recall: 1, f: 1 };
  const lcs = lcsLength(c, r);
  if (lcs === 0) return { precision: 0, recall: 0, f: 0 };
  const precision = lcs / c.length;
  const recall = lcs / r.length;
  return { precision, recall, f: ((1 + beta * beta) * precision * recall) / (recall + beta * beta * precision) };
}

/** An ordered labelled tree. */
export interface LabeledTree {
  label: string;
  children: LabeledTree[];
}

/** The fields whose unnamed tokens are operators (kept in the tree: `a + b` differs from `a - b`). */
const OPERATOR_FIELDS = new Set(['operator', 'operators']);

/** The syntax tree TSED compares (see the module comment). */
export function syntaxTree(source: string): LabeledTree {
  const root: LabeledTree = { label: '', children: [] };
  // An explicit stack: generated code can nest deeply.
  const stack: [SyntaxNode, LabeledTree][] = [[parse(source), root]];
  while (stack.length) {
    const [node, tree] = stack.pop()!;
    if (isPlainString(node) || node.namedChildCount === 0) {
      tree.label = `${node.type}:${node.text}`;
      continue;
    }
    tree.label = node.type;
    const cursor = node.walk();
    if (!cursor.gotoFirstChild()) continue;
    do {
      if (cursor.nodeType === 'comment') continue;
      if (cursor.nodeIsNamed) {
        const child: LabeledTree = { label: '', children: [] };
        tree.children.push(child);
        stack.push([cursor.currentNode, child]);
      } else if (OPERATOR_FIELDS.has(cursor.currentFieldName ?? '')) tree.children.push({ label: cursor.nodeType, children: [] });
    } while (cursor.gotoNextSibling());
  }
  return root;
}

/** Nodes of a tree. */
export function treeSize(tree: LabeledTree): number {
  let n = 0;
  const stack = [tree];
  while (stack.length) {
    const t = stack.pop()!;
    n++;
    for (const c of t.children) stack.push(c);
  }
  return n;
}

/** Postorder label ids, leftmost-leaf indices and keyroots of a tree (Zhang and Shasha's arrays, 0-based). */
function postorder(tree: LabeledTree, ids: Map<string, number>): { labels: Int32Array; lml: Int32Array; keyroots: number[] } {
  const labels: number[] = [];
  const lmlList: number[] = [];
  // Iterative postorder: (node, next child index, leftmost leaf so far).
  const stack: { t: LabeledTree; next: number; lml: number }[] = [{ t: tree, next: 0, lml: -1 }];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.t.children.length) {
      stack.push({ t: top.t.children[top.next++]!, next: 0, lml: -1 });
      continue;
    }
    stack.pop();
    const index = labels.length;
    const lml = top.lml < 0 ? index : top.lml;
    let id = ids.get(top.t.label);
    if (id === undefined) ids.set(top.t.label, (id = ids.size));
    labels.push(id);
    lmlList.push(lml);
    const parent = stack[stack.length - 1];
    if (parent && parent.lml < 0) parent.lml = lml;
  }
  const lml = Int32Array.from(lmlList);
  // Keyroots: the root and every node with a left sibling, i.e. the highest node of each leftmost-leaf value.
  const highest = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) highest.set(lml[i]!, i);
  const keyroots = [...highest.values()].sort((a, b) => a - b);
  return { labels: Int32Array.from(labels), lml, keyroots };
}

/**
 * Zhang and Shasha's tree edit distance with unit costs (insert 1, delete 1, rename 1 when the
 * labels differ). Time O(|A| |B| min(depth, leaves)^2) at worst, memory O(|A| |B|).
 */
export function treeEditDistance(a: LabeledTree, b: LabeledTree): number {
  const ids = new Map<string, number>();
  const A = postorder(a, ids);
  const B = postorder(b, ids);
  const n = A.labels.length;
  const m = B.labels.length;
  const td = new Int32Array(n * m);
  const w = m + 1;
  const fd = new Int32Array((n + 1) * w);
  const { labels: la, lml: La } = A;
  const { labels: lb, lml: Lb } = B;
  for (const i of A.keyroots) {
    const li = La[i]!;
    const rows = i - li + 2;
    for (const j of B.keyroots) {
      const lj = Lb[j]!;
      // Forest distances between A[li..li+x-1] and B[lj..lj+y-1]: row and column 0 are the empty forest.
      const cols = j - lj + 2;
      for (let x = 0; x < rows; x++) fd[x * w] = x;
      for (let y = 1; y < cols; y++) fd[y] = y;
      for (let x = 1; x < rows; x++) {
        const ax = li + x - 1;
        const lx = La[ax]!;
        const label = la[ax]!;
        const row = x * w;
        const up = row - w;
        const tdRow = ax * m;
        const wholeA = lx === li;
        const subRow = (lx - li) * w - lj;
        for (let y = 1; y < cols; y++) {
          const by = lj + y - 1;
          const ly = Lb[by]!;
          let d = fd[up + y]! + 1;
          const ins = fd[row + y - 1]! + 1;
          if (ins < d) d = ins;
          if (wholeA && ly === lj) {
            const ren = fd[up + y - 1]! + (label === lb[by] ? 0 : 1);
            if (ren < d) d = ren;
            td[tdRow + by] = d;
          } else {
            const sub = fd[subRow + ly]! + td[tdRow + by]!;
            if (sub < d) d = sub;
          }
          fd[row + y] = d;
        }
      }
    }
  }
  return td[(n - 1) * m + (m - 1)]!;
}

export interface Tsed {
  distance: number;
  /** 1 - distance / max(nodes), at least 0. */
  similarity: number;
  nodes: [number, number];
}

/**
 * Nodes of one tree times nodes of the other past which TSED is not computed (null): the time
 * grows with that product times the square of the depth, and two tables of that size are kept.
 * 4M is two classes of 2,000 nodes (a few hundred lines) each, a few seconds.
 */
export const TSED_MAX_CELLS = 4_000_000;

/** TSED of a candidate against a reference; null when the trees are too large to compare (TSED_MAX_CELLS). */
export function tsed(candidate: string | LabeledTree, reference: string | LabeledTree): Tsed | null {
  const a = typeof candidate === 'string' ? syntaxTree(candidate) : candidate;
  const b = typeof reference === 'string' ? syntaxTree(reference) : reference;
  const nodes: [number, number] = [treeSize(a), treeSize(b)];
  if (nodes[0] * nodes[1] > TSED_MAX_CELLS) return null;
  const distance = treeEditDistance(a, b);
  return { distance, similarity: Math.max(0, 1 - distance / Math.max(nodes[0], nodes[1])), nodes };
}

export interface CodeSimilarity {
  bleu: number;
  rougeL: RougeL;
  tsed: Tsed | null;
}

/** All three measures of a candidate against a reference (the sources are tokenised and parsed once). */
export function codeSimilarity(candidate: string, reference: string, options: BleuOptions = {}): CodeSimilarity {
  const c = codeTokens(candidate);
  const r = codeTokens(reference);
  return { bleu: bleu(c, r, options), rougeL: rougeL(c, r), tsed: tsed(candidate, reference) };
}
