/**
 * Reading the model's answers. An unusable answer is a typed value the workflow can count and
 * regenerate, never an exception: empty text, a reply cut off at the token limit, no code
 * block, or code "abbreviated" with a remark like `# ... rest unchanged` (which would run as
 * a different program than the one intended).
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

/** Fenced blocks in order. A fence opened and never closed yields one unclosed block. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const blocks: FencedBlock[] = [];
  let open: { fence: string; lang: string; body: string[] } | null = null;
  for (const line of lines) {
    if (!open) {
      const m = /^\s{0,3}(`{3,}|~{3,})\s*([\w+.-]*)[^`]*$/.exec(line);
      if (m) open = { fence: m[1]!, lang: m[2]!.toLowerCase(), body: [] };
      continue;
    }
    const close = /^\s{0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
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
 * so ordinary comments and Python's `...` literal are not mistaken for them.
 */
const ABBREVIATION_PATTERNS: RegExp[] = [
  /#.*\.\.\..*\b(unchanged|same|as before|as above|previous|existing|remain(s|ing)?|rest|omitted|original|other (methods|functions|code))\b/i,
  /#.*\b(rest|remainder) of (the )?(code|file|script|class|module|function|implementation|tests?)\b/i,
  /#.*\b(code|implementation|functions?|methods?|class(es)?|script|everything else)\b.*\b(remains?|stays?|is|are|kept)\s+(the same|unchanged|as (is|before|above))\b/i,
  /#\s*\(?\s*(omitted|truncated|elided)( for brevity)?\s*\)?\s*$/i,
  /#.*\bfor brevity\b/i,
  /^\s*\.\.\.\s*#.*\b(unchanged|same|existing|rest)\b/i,
];

export function findAbbreviation(code: string): string | undefined {
  for (const line of code.split('\n')) {
    if (ABBREVIATION_PATTERNS.some((re) => re.test(line))) return line.trim();
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
  const blocks = fencedBlocks(text).map((b) => (b.closed ? b : { ...b, closed: true, body: b.body.replace(/\s+$/, '') }));
  const closed = blocks.filter((b) => b.closed);
  const code = [...closed].reverse().find((b) => PYTHON_LANGS.has(b.lang)) ?? [...closed].reverse().find((b) => b.lang === '');
  if (!code) {
    return { ok: false, failure: 'no_code_block', detail: blocks.length ? `no python block among ${blocks.length} fenced block(s)` : 'the answer has no fenced code block' };
  }
  if (!code.body.trim()) return { ok: false, failure: 'empty', detail: 'the python block is empty' };
  const abbreviated = findAbbreviation(code.body);
  if (abbreviated) return { ok: false, failure: 'abbreviated', detail: `the code leaves parts out: ${JSON.stringify(abbreviated.slice(0, 160))}` };
  const shell = [...closed].reverse().find((b) => SHELL_LANGS.has(b.lang) && b.body.trim() !== '');
  return { ok: true, code: code.body.replace(/\s+$/, '') + '\n', bash: shell ? shell.body.trim() + '\n' : null };
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
  const answers = [...clean.matchAll(/^[\s>*_#`"-]*answer[*_\s]*:[*_\s]*(.*)$/gim)];
  const last = answers[answers.length - 1];
  if (!last) {
    const detail = 'no "ANSWER:" line in the reply';
    return finishReason === 'length' ? { ok: false, failure: 'truncated', detail: `${detail} (cut off at the token limit)` } : { ok: false, failure: 'no_answer', detail };
  }
  const word = last[1]!.trim().replace(/^[\s"'`*_<([]+/, '').match(/^[A-Za-z]+/)?.[0]?.toLowerCase();
  if (!word || !(allowed as readonly string[]).includes(word)) {
    return { ok: false, failure: 'invalid_answer', detail: `answer ${JSON.stringify(last[1]!.trim().slice(0, 80))} is not one of ${allowed.join('/')}` };
  }
  const before = clean.slice(0, last.index);
  const r = /reasoning[*_\s]*:([\s\S]*)$/i.exec(before);
  const reasoning = (r ? r[1]! : before).trim().replace(/^[*_"\s]+|[*_"\s,]+$/g, '');
  return { ok: true, answer: word as VerdictAnswer, reasoning };
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
