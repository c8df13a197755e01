/**
 * RepoST's candidate rules (the `repost` preset), read from the syntax tree as Python's `ast`
 * would see the function: what R2E's extractors in RepoST's published code keep, and in which
 * order they drop. Each rule's name is the `droppedBy` of the functions it drops.
 *
 *   not-top-level     RepoST takes module-level `def`s and the `def`s written directly in a
 *                     module-level class: no nested classes, nothing under `if`/`try`, no `async def`
 *   hidden-path       a file or folder whose name starts with a dot
 *   dash-in-path      a '-' in the module path (no importable module id)
 *   dunder            a name starting with `__`
 *   no-docstring      (evaluation split) no docstring
 *   no-arguments      (functions) no parameter at all
 *   no-return         (functions) no `return` among the body's own statements
 *   constant-returns  more than 2/3 of the body's own `return`s return a constant
 *   docstring-word:W  (evaluation split) the docstring has the word W (test, http, todo, ...)
 *   body-word:W       a name used in the function, or a whole string constant, is W (main, plt, pool, ...)
 *   name-prefix:P     the name starts with P (test, main, demo, example, _init, ...)
 *   decorator         a function with any decorator; a method with one other than @staticmethod/@classmethod
 *   one-statement     (functions) two statements or fewer, docstring included
 *   wrapper-method    (methods) one statement; or two, the second using `self.`; or three, the
 *                     second using `self.` and the third holding `return`
 *   too-long          25 code lines or more for a function, 20 for a method: lines of the body
 *                     as `ast.unparse` writes each statement (a statement on one line, comments and
 *                     blank lines gone), the docstring left out
 *
 * For the training split RepoST extracts twice, with and without the docstring rules, and samples
 * functions that pass with their docstring first: `withDocstring` says whether one does.
 */
import type { ExtractedFunction } from './extract';
import type { SyntaxNode } from './parser';
import { REPOST_SELECTION } from './presets';

type Node = SyntaxNode;

const STRING_TYPES = new Set(['string', 'concatenated_string']);
const CONSTANT_TYPES = new Set(['integer', 'float', 'true', 'false', 'none', 'ellipsis', 'string', 'concatenated_string']);
const CLAUSE_TYPES = new Set(['elif_clause', 'else_clause', 'except_clause', 'except_group_clause', 'finally_clause', 'case_clause']);

/** A block's statements, as Python's `ast` lists them (comments and line continuations are none). */
function statements(block: Node | null): Node[] {
  return block ? block.namedChildren.filter((c) => c.type !== 'comment' && c.type !== 'line_continuation') : [];
}

/** Whether a string node is an f-string (its start token holds an f). */
function isFormatted(s: Node): boolean {
  const start = s.children.find((c) => c.type === 'string_start');
  return /f/i.test(start?.text ?? '');
}

function isRaw(s: Node): boolean {
  const start = s.children.find((c) => c.type === 'string_start');
  return /r/i.test(start?.text ?? '');
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0', '\n': '' };

function decode(text: string, raw: boolean): string {
  if (raw) return text;
  return text.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\s\S])/g, (whole, e: string) => {
    if (/^[xuU]/.test(e) && e.length > 1) return String.fromCodePoint(parseInt(e.slice(1), 16));
    return ESCAPES[e] ?? whole;
  });
}

/**
 * The constants Python's `ast` makes of a string literal (implicit concatenation joined): one
 * for a plain string, the literal pieces between the `{...}` of an f-string.
 */
function stringConstants(node: Node): string[] {
  const parts = node.type === 'concatenated_string' ? node.namedChildren.filter((c) => c.type === 'string') : [node];
  const out: string[] = [];
  let current = '';
  // A plain string is one constant (even empty); an f-string holds only its non-empty literal pieces.
  const formattedAny = parts.some(isFormatted);
  for (const part of parts) {
    const raw = isRaw(part);
    const formatted = isFormatted(part);
    for (const child of part.children) {
      if (child.type === 'string_content') current += decode(formatted ? child.text.replace(/\{\{/g, '{').replace(/\}\}/g, '}') : child.text, raw);
      else if (child.type === 'escape_sequence') current += decode(child.text, raw);
      else if (child.type === 'interpolation') {
        if (current) out.push(current);
        current = '';
        const spec = child.namedChildren.find((c) => c.type === 'format_specifier');
        if (spec) out.push(spec.text.replace(/^:/, ''));
      }
    }
  }
  if (current || !formattedAny) out.push(current);
  return out;
}

/** The docstring (a string literal as the body's first statement, not an f-string), or null. */
function docstringOf(block: Node | null): string | null {
  const first = statements(block)[0];
  if (!first || first.type !== 'expression_statement' || first.namedChildren.length !== 1) return null;
  const s = first.namedChildren[0]!;
  if (!STRING_TYPES.has(s.type)) return null;
  const parts = s.type === 'concatenated_string' ? s.namedChildren.filter((c) => c.type === 'string') : [s];
  // An f-string or a bytes literal is no docstring to Python.
  if (parts.some((p) => isFormatted(p) || /b/i.test(p.children.find((c) => c.type === 'string_start')?.text ?? ''))) return null;
  return stringConstants(s).join('');
}

/** Identifiers that Python's `ast` does not make a `Name` of: definitions' and parameters' own names, attributes, keywords, imports. */
function isName(id: Node): boolean {
  const parent = id.parent;
  if (!parent) return false;
  const field = (n: Node) => {
    const p = n.parent;
    if (!p) return null;
    for (let i = 0; i < p.childCount; i++) if (p.child(i)?.id === n.id) return p.fieldNameForChild(i);
    return null;
  };
  switch (parent.type) {
    case 'function_definition':
    case 'class_definition':
      return field(id) !== 'name';
    case 'attribute':
      return field(id) !== 'attribute';
    case 'keyword_argument':
      return field(id) !== 'name';
    case 'parameters':
    case 'lambda_parameters':
    case 'global_statement':
    case 'nonlocal_statement':
    case 'dotted_name':
    case 'aliased_import':
    case 'import_statement':
    case 'import_from_statement':
      return false;
    case 'default_parameter':
    case 'typed_default_parameter':
      return field(id) !== 'name';
    case 'typed_parameter':
      return field(id) === 'type';
    case 'list_splat_pattern':
    case 'dictionary_splat_pattern':
      return !['parameters', 'lambda_parameters', 'typed_parameter'].includes(parent.parent?.type ?? '');
    case 'as_pattern_target':
      // `except E as e` binds a plain name; `with f() as h` assigns a Name.
      return parent.parent?.parent?.type !== 'except_clause' && parent.parent?.parent?.type !== 'except_group_clause';
    default:
      return true;
  }
}

/** Lower-case names and whole string constants of the function, decorators included (what `ast.walk` meets). */
function namesAndConstants(def: Node): Set<string> {
  const out = new Set<string>();
  const roots = [def, ...(def.parent?.type === 'decorated_definition' ? def.parent.namedChildren.filter((c) => c.type === 'decorator') : [])];
  for (const root of roots) {
    for (const id of root.descendantsOfType('identifier')) if (isName(id)) out.add(id.text.toLowerCase());
    for (const s of root.descendantsOfType(['string', 'concatenated_string'])) {
      if (s.type === 'string' && s.parent?.type === 'concatenated_string') continue;
      for (const c of stringConstants(s)) out.add(c.toLowerCase());
    }
  }
  return out;
}

/**
 * A statement's lines as `ast.unparse` writes them. `ast.unparse` puts an empty line before a
 * definition (function or class) nested in what it writes, not before the one it starts with.
 */
export function unparsedLines(stmt: Node, nested = false): number {
  const gap = nested ? 1 : 0;
  if (stmt.type === 'decorated_definition') {
    const decorators = stmt.namedChildren.filter((c) => c.type === 'decorator').length;
    const def = stmt.childForFieldName('definition');
    return gap + decorators + (def ? unparsedLines(def) : 1);
  }
  if (stmt.type === 'function_definition' || stmt.type === 'class_definition') return gap + 1 + blockLines(stmt.childForFieldName('body'), true);
  const blocks = stmt.namedChildren.filter((c) => c.type === 'block' || CLAUSE_TYPES.has(c.type));
  if (blocks.length === 0) return 1;
  let lines = 1;
  for (const b of blocks) lines += b.type === 'block' ? blockLines(b, false) : unparsedLines(b, true);
  return lines;
}

/** A body's lines as `ast.unparse` writes them; a nested definition's docstring keeps its line breaks. */
function blockLines(block: Node | null, definitionBody: boolean): number {
  const body = statements(block);
  let lines = 0;
  body.forEach((stmt, i) => {
    const doc = i === 0 && definitionBody ? docstringOf(block) : null;
    // A case block of `match` holds clauses, counted like the clauses of other statements.
    lines += doc !== null ? 1 + (doc.match(/\n/g)?.length ?? 0) : unparsedLines(stmt, true);
  });
  return lines;
}

/** The function's code lines as RepoST counts them: its body's statements, unparsed, without the docstring. */
export function repostCodeLines(def: Node): number {
  const block = def.childForFieldName('body');
  const body = statements(block);
  const hasDoc = docstringOf(block) !== null;
  return body.reduce((n, stmt, i) => n + (i === 0 && hasDoc ? 0 : unparsedLines(stmt)), 0);
}

/** Punctuation a docstring word loses at its end. */
const TRAILING_PUNCTUATION = new Set([...')"\'`]}>.;!?']);

/**
 * `text` without the characters of `set` at its end. A scan from the end: a regular expression
 * such as `/[...]+$/` is tried at every position of a long run that does not reach the end, which
 * is quadratic in a docstring word of unbounded length (a repository's text is untrusted).
 */
function trimTrailing(text: string, set: ReadonlySet<string>): string {
  let end = text.length;
  while (end > 0 && set.has(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/**
 * Words of a docstring, lower case, as NLTK's word tokenizer would give them for matching: split
 * at white space, punctuation taken off both ends, `:` and `,` split off inside a word unless a
 * digit follows, clitics (`'s`, `n't`, ...) taken off; a hyphenated or slashed word stays whole.
 */
export function docstringWords(doc: string): Set<string> {
  const out = new Set<string>();
  for (const chunk of doc.split(/\s+/)) {
    for (const piece of chunk.split(/[:,](?!\d)/)) {
      const word = trimTrailing(piece.replace(/^[("'`[{<]+/, ''), TRAILING_PUNCTUATION).replace(/('s|'re|'ve|'ll|'d|'m|n't)$/i, '');
      if (word) out.add(word.toLowerCase());
    }
  }
  return out;
}

/** Text of a statement without its comments, with the spaces around dots taken out (as unparsed). */
function codeText(stmt: Node): string {
  let text = stmt.text;
  const comments = stmt.descendantsOfType('comment').map((c) => [c.startIndex - stmt.startIndex, c.endIndex - stmt.startIndex] as const);
  for (const [from, to] of comments.reverse()) text = text.slice(0, from) + text.slice(to);
  return joinDots(text);
}

/**
 * White space around each `.` taken out, in one pass over the pieces between dots: the same as
 * replacing every match of white space, a dot and white space by a dot, which a regular expression
 * does by rescanning every run of white space not followed by a dot (quadratic in a statement of
 * unbounded length).
 */
export function joinDots(text: string): string {
  const pieces = text.split('.');
  return pieces.map((p, i) => (i > 0 ? (i < pieces.length - 1 ? p.trim() : p.trimStart()) : i < pieces.length - 1 ? p.trimEnd() : p)).join('.');
}

/** What RepoST's rules read of a function, as Python's `ast` would give it (cross-checked against `ast` in the tests). */
export interface RepostMeasures {
  /** The body's statements, docstring included (`len(body)`). */
  statements: number;
  docstring: string | null;
  /** `return` statements among the body's own statements, and those returning a constant. */
  directReturns: number;
  constantReturns: number;
  /** Lower-case names (`ast.Name`) and string constants met walking the definition, decorators included. */
  namesAndConstants: Set<string>;
  /** Code lines as `ast.unparse` writes the body's statements, docstring left out. */
  codeLines: number;
}

export function repostMeasures(def: Node): RepostMeasures {
  const block = def.childForFieldName('body');
  const body = statements(block);
  const returns = body.filter((s) => s.type === 'return_statement');
  return {
    statements: body.length,
    docstring: docstringOf(block),
    directReturns: returns.length,
    constantReturns: returns.filter(returnsConstant).length,
    namesAndConstants: namesAndConstants(def),
    codeLines: repostCodeLines(def),
  };
}

/** `return <constant>`: a number, a string (not an f-string), True, False, None or `...`. */
function returnsConstant(r: Node): boolean {
  let v = r.namedChildren.find((c) => c.type !== 'comment');
  while (v && v.type === 'parenthesized_expression' && v.namedChildren.length === 1) v = v.namedChildren[0]!;
  if (!v || !CONSTANT_TYPES.has(v.type)) return false;
  if (v.type === 'string') return !isFormatted(v);
  if (v.type === 'concatenated_string') return !v.namedChildren.some((p) => p.type === 'string' && isFormatted(p));
  return true;
}

export interface RepostVerdict {
  /** The first rule that drops the function, or null. */
  droppedBy: string | null;
  /** Whether it also passes with the docstring rules (RepoST samples these first). */
  withDocstring: boolean;
}

/** Where RepoST's extractors look: module-level `def`s and `def`s written directly in a module-level class. */
function inRepostScope(fn: ExtractedFunction, def: Node): boolean {
  if (fn.isAsync) return false;
  const container = def.parent?.type === 'decorated_definition' ? def.parent.parent : def.parent;
  if (fn.kind === 'function') return container?.type === 'module';
  if (container?.type !== 'block') return false;
  const cls = container.parent;
  if (cls?.type !== 'class_definition') return false;
  const clsContainer = cls.parent?.type === 'decorated_definition' ? cls.parent.parent : cls.parent;
  return clsContainer?.type === 'module';
}

/** RepoST's verdict on one function or method of a repository of the given split. */
export function repostVerdict(fn: ExtractedFunction, split: 'train' | 'eval'): RepostVerdict {
  const R = REPOST_SELECTION;
  const def = fn.node;
  const dropped = (droppedBy: string): RepostVerdict => ({ droppedBy, withDocstring: false });
  if (!inRepostScope(fn, def)) return dropped('not-top-level');
  if (fn.path.split('/').some((p) => p.startsWith('.'))) return dropped('hidden-path');
  if (fn.path.includes('-')) return dropped('dash-in-path');
  if (fn.name.startsWith('__')) return dropped('dunder');

  const block = def.childForFieldName('body');
  const body = statements(block);
  const m = repostMeasures(def);
  const docstring = m.docstring;
  const method = fn.kind === 'method';
  // The docstring rules, checked where RepoST's docstring pass has them; remembered for the training split.
  let docstringRule: string | null = docstring === null ? 'no-docstring' : null;
  const requireDocstring = R.requireDocstring[split];
  if (requireDocstring && docstringRule) return dropped(docstringRule);

  if (!method) {
    const params = (def.childForFieldName('parameters')?.namedChildren ?? []).filter((p) => p.type !== 'positional_separator' && p.type !== 'keyword_separator' && p.type !== 'comment');
    if (params.length === 0) return dropped('no-arguments');
    if (m.directReturns === 0) return dropped('no-return');
  }
  if (m.constantReturns > R.constantReturnShare * m.directReturns) return dropped('constant-returns');

  if (docstring !== null) {
    const words = docstringWords(docstring);
    const hit = R.docstringWords.find((w) => words.has(w));
    if (hit) {
      docstringRule = `docstring-word:${hit}`;
      if (requireDocstring) return dropped(docstringRule);
    }
  }
  const bodyHit = R.bodyWords.find((w) => m.namesAndConstants.has(w));
  if (bodyHit) return dropped(`body-word:${bodyHit}`);
  const lower = fn.name.toLowerCase();
  const prefix = R.namePrefixes.find((p) => lower.startsWith(p));
  if (prefix) return dropped(`name-prefix:${prefix}`);

  const allowed: readonly string[] = method ? R.methodDecorators : [];
  if (fn.decorators.some((d) => !allowed.includes(d.replace(/\s+/g, '')))) return dropped('decorator');
  if (!method && body.length <= 2) return dropped('one-statement');
  if (method) {
    const selfIn = (i: number) => codeText(body[i]!).includes('self.');
    const wrapper = body.length === 1 || (body.length === 2 && selfIn(1)) || (body.length === 3 && selfIn(1) && codeText(body[2]!).includes('return'));
    if (wrapper) return dropped('wrapper-method');
  }
  const limit = method ? R.maxMethodCodeLines : R.maxFunctionCodeLines;
  if (m.codeLines >= limit) return dropped('too-long');
  return { droppedBy: null, withDocstring: docstringRule === null };
}
