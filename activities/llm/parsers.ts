/**
 * Reading the model's answers. An unusable answer is a typed value the workflow can count and
 * regenerate, never an exception: empty text, a reply cut off at the token limit, no code
 * block, or code "abbreviated" with a remark like `# ... rest unchanged` (which would run as
 * a different program than the one intended).
 *
 * An answer can be any size (a model's reply, or a hostile one of megabytes), so parsing is linear
 * in it: lines are read with plain string operations, and no backtracking regular expression is
 * applied to a line or an answer of unbounded length.
 */

export type CodeParseFailure = 'empty' | 'no_code_block' | 'truncated' | 'abbreviated';

export type CodeParse =
  | { ok: true; code: string; bash: string | null }
  | { ok: false; failure: CodeParseFailure; detail: string };

interface FencedBlock {
  lang: string;
  body: string;
  closed: boolean;
}

const PYTHON_LANGS = new Set(['python', 'python3', 'py']);
const SHELL_LANGS = new Set(['bash', 'sh', 'shell', 'console']);

/** White space as `\s` and `trim()` know it, for one character. */
function isSpace(ch: string): boolean {
  return ch.trim() === '' && ch !== '';
}

/** `\w`: an ASCII letter, digit or underscore. */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** A fence at the start of a line: up to three spaces, then three or more backticks or tildes. */
function fenceOf(line: string): { fence: string; rest: string } | null {
  let i = 0;
  while (i < 3 && i < line.length && isSpace(line[i]!)) i++;
  const mark = line[i];
  if (mark !== '`' && mark !== '~') return null;
  let j = i;
  while (j < line.length && line[j] === mark) j++;
  if (j - i < 3) return null;
  return { fence: line.slice(i, j), rest: line.slice(j) };
}

/** An opening fence: the fence, then a language word, and no backtick after it. */
function openingFence(line: string): { fence: string; lang: string } | null {
  const f = fenceOf(line);
  if (!f || f.rest.includes('`')) return null;
  const rest = f.rest.trimStart();
  let end = 0;
  while (end < rest.length && (isWordChar(rest.charCodeAt(end)) || rest[end] === '+' || rest[end] === '.' || rest[end] === '-')) end++;
  return { fence: f.fence, lang: rest.slice(0, end).toLowerCase() };
}

/** Fenced blocks in order. A fence opened and never closed yields one unclosed block. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const blocks: FencedBlock[] = [];
  let open: { fence: string; lang: string; body: string[] } | null = null;
  for (const line of lines) {
    if (!open) {
      const o = openingFence(line);
      if (o) open = { ...o, body: [] };
      continue;
    }
    const close = fenceOf(line);
    if (close && close.rest.trim() === '' && close.fence[0] === open.fence[0] && close.fence.length >= open.fence.length) {
      blocks.push({ lang: open.lang, body: open.body.join('\n'), closed: true });
      open = null;
    } else {
      open.body.push(line);
    }
  }
  if (open) blocks.push({ lang: open.lang, body: open.body.join('\n'), closed: false });
  return blocks;
}

/**
 * Comment lines that stand for code the model left out. They need both an elision signal
 * ("...", "rest of", "remaining", "omitted") and a claim the code is unchanged or elsewhere,
 * so ordinary comments and Python's `...` literal are not mistaken for them. A comment is read
 * as its words (runs of `\w`, lower case) and the gaps between them, once, so a line of any
 * length costs time in proportion to its length:
 *   - after "...": unchanged, same, as before, as above, previous, existing, remain(s/ing), rest,
 *     omitted, original, other methods/functions/code;
 *   - "rest (or remainder) of [the] code/file/script/class/module/function/implementation/test(s)";
 *   - code, implementation, function(s), method(s), class(es), script or "everything else", then
 *     remain(s), stay(s), is, are or kept, then "the same", "unchanged" or "as is/before/above";
 *   - a comment that is only "omitted", "truncated" or "elided" (maybe "for brevity", in parentheses);
 *   - "for brevity" anywhere;
 *   - a line `... # ...` whose comment says unchanged, same, existing or rest.
 */
interface Word {
  text: string;
  start: number;
  end: number;
}

function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isWordChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isWordChar(text.charCodeAt(i))) i++;
    words.push({ text: text.slice(start, i), start, end: i });
  }
  return words;
}

const AFTER_ELLIPSIS = phrases('unchanged|same|as before|as above|previous|existing|remain|remains|remaining|rest|omitted|original|other methods|other functions|other code');
const REST_OF = ['rest', 'remainder'].flatMap((r) =>
  ['', 'the '].flatMap((the) => ['code', 'file', 'script', 'class', 'module', 'function', 'implementation', 'test', 'tests'].map((what) => `${r} of ${the}${what}`.split(' '))),
);
const SUBJECTS = phrases('code|implementation|function|functions|method|methods|class|classes|script|everything else');
const STAYS = new Set(['remain', 'remains', 'stay', 'stays', 'is', 'are', 'kept']);
const UNCHANGED = phrases('the same|unchanged|as is|as before|as above');
const ONLY_ELIDED = new Set(['omitted', 'truncated', 'elided', 'omitted for brevity', 'truncated for brevity', 'elided for brevity']);
const DOTS_SAY = new Set(['unchanged', 'same', 'existing', 'rest']);

/** Lower case for ASCII letters only (the words compared are ASCII; other letters keep their length). */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function phrases(list: string): string[][] {
  return list.split('|').map((p) => p.split(' '));
}

/** Whether `phrase` starts at word `k`, its words one space apart. */
function phraseAt(text: string, words: Word[], k: number, phrase: string[]): boolean {
  for (let m = 0; m < phrase.length; m++) {
    const w = words[k + m];
    if (!w || w.text !== phrase[m]) return false;
    if (m > 0 && (w.start !== words[k + m - 1]!.end + 1 || text[w.start - 1] !== ' ')) return false;
  }
  return true;
}

/** The index of the word after a phrase of `phrases` that starts at word `k`, or -1. */
function afterPhrase(text: string, words: Word[], k: number, list: string[][]): number {
  for (const p of list) if (phraseAt(text, words, k, p)) return k + p.length;
  return -1;
}

function isAbbreviation(line: string): boolean {
  const hash = line.indexOf('#');
  if (hash < 0) return false;
  const comment = asciiLower(line.slice(hash + 1));
  const words = wordsOf(comment);

  // "..." and, after it, a word saying the code is unchanged or elsewhere.
  const dots = comment.indexOf('...');
  if (dots >= 0) {
    for (let k = 0; k < words.length; k++) if (words[k]!.start >= dots + 3 && afterPhrase(comment, words, k, AFTER_ELLIPSIS) >= 0) return true;
  }
  // "rest of the code", "remainder of file", ...
  for (let k = 0; k < words.length; k++) if ((words[k]!.text === 'rest' || words[k]!.text === 'remainder') && afterPhrase(comment, words, k, REST_OF) >= 0) return true;
  // "the implementation remains unchanged", "other methods stay the same", ...: the first subject, then a verb and a claim.
  let afterSubject = -1;
  for (let k = 0; k < words.length && afterSubject < 0; k++) afterSubject = afterPhrase(comment, words, k, SUBJECTS);
  if (afterSubject >= 0) {
    for (let k = afterSubject; k < words.length; k++) {
      const stays = words[k]!;
      const next = words[k + 1];
      if (!STAYS.has(stays.text) || !next || next.start === stays.end) continue;
      if (comment.slice(stays.end, next.start).trim() !== '') continue;
      if (afterPhrase(comment, words, k + 1, UNCHANGED) >= 0) return true;
    }
  }
  // "# omitted", "# (truncated for brevity)": the whole comment after the last '#'.
  let only = asciiLower(line.slice(line.lastIndexOf('#') + 1).trimStart());
  if (only.startsWith('(')) only = only.slice(1);
  only = only.trim();
  if (only.endsWith(')')) only = only.slice(0, -1);
  if (ONLY_ELIDED.has(only.trim())) return true;
  // "for brevity" anywhere in the comment.
  for (let k = 0; k < words.length; k++) if (phraseAt(comment, words, k, ['for', 'brevity'])) return true;
  // "... # rest unchanged" as a line of its own.
  const lead = line.trimStart();
  if (lead.startsWith('...') && lead.slice(3).trimStart().startsWith('#')) {
    if (words.some((w) => DOTS_SAY.has(w.text))) return true;
  }
  return false;
}

export function findAbbreviation(code: string): string | undefined {
  for (const line of code.split('\n')) {
    if (isAbbreviation(line)) return line.trim();
  }
  return undefined;
}

/**
 * Takes the last Python block (or, failing that, the last unlabelled one) as the code and the
 * last shell block as the optional bash script (debug rounds may ask for package installs).
 */
export function parseCodeAnswer(text: string, finishReason?: string | null): CodeParse {
  if (!text || !text.trim()) {
    return { ok: false, failure: 'empty', detail: finishReason === 'length' ? 'empty answer, cut off at the token limit' : 'the answer is empty' };
  }
  if (finishReason === 'length') {
    return { ok: false, failure: 'truncated', detail: `the answer was cut off at the token limit after ${text.length} characters` };
  }
  // A last block left without its closing fence is complete when the model says it stopped on
  // its own: only `length` means the answer was cut off (handled above).
  const blocks = fencedBlocks(text).map((b) => (b.closed ? b : { ...b, closed: true, body: b.body.trimEnd() }));
  const closed = blocks.filter((b) => b.closed);
  const code = [...closed].reverse().find((b) => PYTHON_LANGS.has(b.lang)) ?? [...closed].reverse().find((b) => b.lang === '');
  if (!code) {
    return { ok: false, failure: 'no_code_block', detail: blocks.length ? `no python block among ${blocks.length} fenced block(s)` : 'the answer has no fenced code block' };
  }
  if (!code.body.trim()) return { ok: false, failure: 'empty', detail: 'the python block is empty' };
  const abbreviated = findAbbreviation(code.body);
  if (abbreviated) return { ok: false, failure: 'abbreviated', detail: `the code leaves parts out: ${JSON.stringify(abbreviated.slice(0, 160))}` };
  const shell = [...closed].reverse().find((b) => SHELL_LANGS.has(b.lang) && b.body.trim() !== '');
  return { ok: true, code: code.body.trimEnd() + '\n', bash: shell ? shell.body.trim() + '\n' : null };
}

export type VerdictAnswer = 'yes' | 'no' | 'same';
export type VerdictFailure = 'empty' | 'no_answer' | 'invalid_answer' | 'truncated';

export type VerdictParse =
  | { ok: true; answer: VerdictAnswer; reasoning: string }
  | { ok: false; failure: VerdictFailure; detail: string };

/**
 * Reads `REASONING: ...` / `ANSWER: ...` answers of the check prompts. The last ANSWER line
 * wins (models sometimes restate the format first); quotes, markdown emphasis and trailing
 * punctuation around the word are ignored. `allowed` narrows the accepted words (the test
 * check has no "same").
 */
export function parseVerdict(text: string, allowed: readonly VerdictAnswer[] = ['same', 'yes', 'no'], finishReason?: string | null): VerdictParse {
  if (!text || !text.trim()) return { ok: false, failure: 'empty', detail: 'the answer is empty' };
  const clean = text.replace(/\r\n/g, '\n');
  const last = lastAnswerLine(clean);
  if (!last) {
    const detail = 'no "ANSWER:" line in the reply';
    return finishReason === 'length' ? { ok: false, failure: 'truncated', detail: `${detail} (cut off at the token limit)` } : { ok: false, failure: 'no_answer', detail };
  }
  const word = last[1]!.trim().replace(/^[\s"'`*_<([]+/, '').match(/^[A-Za-z]+/)?.[0]?.toLowerCase();
  if (!word || !(allowed as readonly string[]).includes(word)) {
    return { ok: false, failure: 'invalid_answer', detail: `answer ${JSON.stringify(last[1]!.trim().slice(0, 80))} is not one of ${allowed.join('/')}` };
  }
  const before = clean.slice(0, last.index);
  const reasoning = stripEnds(reasoningOf(before).trim(), (ch) => ch === '*' || ch === '_' || ch === '"' || isSpace(ch), (ch) => ch === '*' || ch === '_' || ch === '"' || ch === ',' || isSpace(ch));
  return { ok: true, answer: word as VerdictAnswer, reasoning };
}

const isEmphasisOrSpace = (ch: string) => ch === '*' || ch === '_' || isSpace(ch);

const isLineEnd = (ch: string | undefined) => ch === '\n' || ch === '\r' || ch === '\u2028' || ch === '\u2029';
const isAnswerLead = (ch: string) => isSpace(ch) || '>*_#`"-'.includes(ch);

/**
 * The last `ANSWER: <value>` (the word in any case): from a line's start, quote, list, emphasis or
 * heading marks and white space (blank lines too), the word, a colon, and the value: the rest of
 * the line where the text after the colon resumes (an answer may sit on the next line). Returns
 * the value (index 1, as a match holds it) and where its first line starts; earlier answers are
 * read the same way, each from where the one before ended. One pass over the text.
 */
function lastAnswerLine(text: string): { 1: string; index: number } | null {
  let found: { 1: string; index: number } | null = null;
  let pos = 0;
  while (pos <= text.length) {
    // The next line start at or after pos.
    let p = pos;
    while (p < text.length && p > 0 && !isLineEnd(text[p - 1])) p++;
    if (p > 0 && !isLineEnd(text[p - 1])) break;
    let q = p;
    while (q < text.length && isAnswerLead(text[q]!)) q++;
    if (asciiLower(text.slice(q, q + 6)) === 'answer') {
      let i = q + 6;
      while (i < text.length && isEmphasisOrSpace(text[i]!)) i++;
      if (text[i] === ':') {
        let r = i + 1;
        while (r < text.length && isEmphasisOrSpace(text[r]!)) r++;
        let e = r;
        while (e < text.length && !isLineEnd(text[e])) e++;
        found = { 1: text.slice(r, e), index: p };
        pos = e;
        continue;
      }
    }
    // Every line start up to q leads to the same word: go on after it.
    pos = q + 1;
  }
  return found;
}

/** What follows the first `REASONING:` (emphasis allowed before the colon), else the whole text. */
function reasoningOf(text: string): string {
  const lower = asciiLower(text);
  for (let at = lower.indexOf('reasoning'); at >= 0; at = lower.indexOf('reasoning', at + 1)) {
    let i = at + 'reasoning'.length;
    while (i < text.length && isEmphasisOrSpace(text[i]!)) i++;
    if (text[i] === ':') return text.slice(i + 1);
  }
  return text;
}

/** `text` without the leading characters `lead` accepts and the trailing ones `trail` accepts. */
function stripEnds(text: string, lead: (ch: string) => boolean, trail: (ch: string) => boolean): string {
  let a = 0;
  while (a < text.length && lead(text[a]!)) a++;
  let b = text.length;
  while (b > a && trail(text[b - 1]!)) b--;
  return text.slice(a, b);
}

/** Docstring answers: plain text, with an accidental code fence or quotes stripped. */
export function parseDocstringAnswer(text: string, finishReason?: string | null): { ok: true; docstring: string } | { ok: false; failure: 'empty' | 'truncated'; detail: string } {
  if (finishReason === 'length') return { ok: false, failure: 'truncated', detail: 'the docstring was cut off at the token limit' };
  let body = text.trim();
  const fenced = fencedBlocks(body).find((b) => b.closed);
  if (fenced && body.startsWith('```')) body = fenced.body.trim();
  body = body.replace(/^(r|u)?("""|''')/, '').replace(/("""|''')$/, '').trim();
  if (!body) return { ok: false, failure: 'empty', detail: 'the docstring is empty' };
  return { ok: true, docstring: body };
}
