import * as fs from 'node:fs';
import { findAbbreviation, parseCodeAnswer, parseDocstringAnswer, parseVerdict } from '../../../activities/llm';
import { REPOST_SAMPLE } from '../../support/fixtures';

describe('parseCodeAnswer', () => {
  it('takes the last python block and the optional bash block', () => {
    const text = [
      'Reasoning: the import was missing.',
      '```python',
      'def draft():',
      '    pass',
      '```',
      'Final version:',
      '```python',
      'import os',
      '',
      'def f(x):',
      '    return os.path.join(x, "a")',
      '```',
      '```bash',
      'pip install requests==2.31.0',
      '```',
    ].join('\n');
    const parsed = parseCodeAnswer(text, 'stop');
    expect(parsed).toEqual({ ok: true, code: 'import os\n\ndef f(x):\n    return os.path.join(x, "a")\n', bash: 'pip install requests==2.31.0\n' });
  });

  it('accepts an unlabelled block when there is no python block, and reports no bash as null', () => {
    expect(parseCodeAnswer('```\nx = 1\n```')).toEqual({ ok: true, code: 'x = 1\n', bash: null });
    expect(parseCodeAnswer('```py\nx = 2\n```\n```sh\n\n```')).toEqual({ ok: true, code: 'x = 2\n', bash: null });
  });

  it('takes a last block without its closing fence as complete when the model stopped on its own', () => {
    expect(parseCodeAnswer('Here it is.\n```python\ndef f():\n    return 1\n', 'stop')).toEqual({ ok: true, code: 'def f():\n    return 1\n', bash: null });
    expect(parseCodeAnswer('```python\ndef f():\n    return 1', null)).toMatchObject({ ok: true, code: 'def f():\n    return 1\n' });
    // Cut off at the token limit it is truncated, fence or no fence.
    expect(parseCodeAnswer('```python\ndef f():\n    return [1,', 'length')).toMatchObject({ ok: false, failure: 'truncated' });
  });

  it('keeps code that contains backticks inside strings and longer fences', () => {
    const parsed = parseCodeAnswer('````python\ns = """```not a fence```"""\n````');
    expect(parsed).toEqual({ ok: true, code: 's = """```not a fence```"""\n', bash: null });
  });

  it.each([
    ['', 'stop', 'empty'],
    ['   \n ', null, 'empty'],
    ['```python\n\n```', 'stop', 'empty'],
    ['I would change the import.', 'stop', 'no_code_block'],
    ['```bash\nls\n```', 'stop', 'no_code_block'],
    ['```python\ndef f():\n    return 1\n```', 'length', 'truncated'],
    ['```python\nimport os\n\n# ... rest of the code unchanged\n```', 'stop', 'abbreviated'],
    ['```python\nclass A:\n    def f(self):\n        ...  # same as before\n```', 'stop', 'abbreviated'],
    ['```python\ndef f():\n    pass\n# remaining functions stay the same\n```', 'stop', 'abbreviated'],
    ['```python\nx = 1\n# (omitted for brevity)\n```', 'stop', 'abbreviated'],
  ] as const)('reports %j (finish %s) as %s', (text, finish, failure) => {
    const parsed = parseCodeAnswer(text, finish);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.failure).toBe(failure);
      expect(parsed.detail.length).toBeGreaterThan(5);
    }
  });

  it('does not mistake ordinary comments or the Ellipsis literal for abbreviations', () => {
    const code = [
      'from typing import Protocol',
      'class P(Protocol):',
      '    def f(self) -> int: ...',
      '# the rest is handled by the caller',
      'x = [1, 2, 3]  # values stay the same order',
      'def g():',
      '    ...  # TODO',
    ].join('\n');
    expect(findAbbreviation(code)).toBeUndefined();
    expect(parseCodeAnswer('```python\n' + code + '\n```').ok).toBe(true);
  });
});

describe('parseCodeAnswer on RepoST published scripts', () => {
  const records = fs
    .readFileSync(REPOST_SAMPLE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { func_name: string; eval_script: string });

  it('extracts every accepted evaluation script unchanged, with no false abbreviation alarm', () => {
    const problems = records
      .map((r) => ({ name: r.func_name, parsed: parseCodeAnswer(`Reasoning: done.\n\n\`\`\`python\n${r.eval_script}\n\`\`\`\n`, 'stop') }))
      .filter(({ parsed }) => !parsed.ok)
      .map(({ name, parsed }) => `${name}: ${JSON.stringify(parsed)}`);
    expect(problems).toEqual([]);
    const first = parseCodeAnswer(`\`\`\`python\n${records[0]!.eval_script}\n\`\`\``);
    expect(first.ok && first.code.trim()).toBe(records[0]!.eval_script.trim());
  });
});

describe('parseVerdict', () => {
  it('reads REASONING and ANSWER', () => {
    expect(parseVerdict('REASONING: identical bodies.\nANSWER: same')).toEqual({ ok: true, answer: 'same', reasoning: 'identical bodies.' });
  });

  it('tolerates quotes, markdown, case and a restated format before the real answer', () => {
    const text = 'Format: ANSWER: "same", "yes" or "no".\n\n**REASONING:** the mock changes nothing,\n**ANSWER:** "Yes".';
    expect(parseVerdict(text)).toEqual({ ok: true, answer: 'yes', reasoning: 'the mock changes nothing' });
  });

  it('restricts the allowed answers', () => {
    expect(parseVerdict('REASONING: fine\nANSWER: same', ['yes', 'no'])).toMatchObject({ ok: false, failure: 'invalid_answer' });
    expect(parseVerdict('REASONING: fine\nANSWER: no', ['yes', 'no'])).toMatchObject({ ok: true, answer: 'no' });
  });

  it.each([
    ['', undefined, 'empty'],
    ['The functions look equivalent to me.', undefined, 'no_answer'],
    ['REASONING: long thought that got cut', 'length', 'truncated'],
    ['REASONING: x\nANSWER: maybe', undefined, 'invalid_answer'],
  ] as const)('reports %j as %s', (text, finish, failure) => {
    expect(parseVerdict(text, undefined, finish)).toMatchObject({ ok: false, failure });
  });
});

describe('parseDocstringAnswer', () => {
  it('strips fences and quotes', () => {
    expect(parseDocstringAnswer('```\n"""Return the sum."""\n```')).toEqual({ ok: true, docstring: 'Return the sum.' });
    expect(parseDocstringAnswer('Return the sum of a and b.')).toEqual({ ok: true, docstring: 'Return the sum of a and b.' });
    expect(parseDocstringAnswer('  ')).toMatchObject({ ok: false, failure: 'empty' });
    expect(parseDocstringAnswer('Return the', 'length')).toMatchObject({ ok: false, failure: 'truncated' });
  });
});

describe('answers of any size are read in one pass', () => {
  // Inputs on which the former regular expressions backtracked (cubic in a line's length, 39 s on a
  // 16 KB comment line); here each must simply be read, with the right result, in the test's run.
  it('a 16 KB comment line with "..." and a subject but no claim is an ordinary comment', () => {
    const line = `x = 1  ${'# the code ... and more '.repeat(700)}`;
    expect(line.length).toBeGreaterThan(16_000);
    expect(findAbbreviation(line)).toBeUndefined();
    expect(findAbbreviation(`${line} is new`)).toBeUndefined();
    // The same line ending in a claim is an abbreviation, however long.
    expect(findAbbreviation(`${line} is unchanged`) === `${line} is unchanged`.trim()).toBe(true);
    expect(findAbbreviation(`${'# note '.repeat(3000)} (omitted)`) === undefined).toBe(true);
    expect(findAbbreviation(`${'# note '.repeat(3000)}# (omitted)`) !== undefined).toBe(true);
  });

  it('a 1 MB answer: long comments, fence-like lines and white space runs', () => {
    const filler = Array.from({ length: 40 }, (_, i) => `    # step ${i} ${'... the function '.repeat(1000)}`).join('\n');
    const fenceLike = `\`\`\`${'a'.repeat(100_000)}\``;
    const answer = `Here it is.\n${fenceLike}\n\`\`\`python\ndef f(x):\n${filler}\n    return x${' '.repeat(200_000)}\n\`\`\`\n${' \t'.repeat(100_000)}\n`;
    expect(answer.length).toBeGreaterThan(1_000_000);
    const parsed = parseCodeAnswer(answer);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.code.startsWith('def f(x):\n    # step 0 ')).toBe(true);
      expect(parsed.code.endsWith('    return x\n')).toBe(true);
    }
  });

  it('a 1 MB verdict: blank lines, runs of spaces and emphasis around the answer', () => {
    const reasoning = `REASONING: ${'fine, '.repeat(50_000)}${' '.repeat(300_000)}x`;
    const text = `${reasoning}\n${'\n'.repeat(200_000)}${'  '.repeat(100_000)}**ANSWER:** yes${' ,'.repeat(100_000)}`;
    expect(text.length).toBeGreaterThan(1_000_000);
    const v = parseVerdict(text);
    expect(v).toMatchObject({ ok: true, answer: 'yes' });
    if (v.ok) expect(v.reasoning.endsWith('x')).toBe(true);
    // No answer at all, in a megabyte of near-misses.
    expect(parseVerdict(`${'answer '.repeat(150_000)}\n${'ANSWER*_ \n'.repeat(10_000)}`)).toMatchObject({ ok: false, failure: 'no_answer' });
  });
});
