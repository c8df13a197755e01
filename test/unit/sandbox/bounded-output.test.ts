import { BoundedOutput } from '../../../activities/sandbox/bounded-output';

describe('BoundedOutput', () => {
  test('keeps everything under the limit', () => {
    const out = new BoundedOutput(100);
    out.push(Buffer.from('hello '));
    out.push(Buffer.from('world'));
    expect(out.toString()).toBe('hello world');
    expect(out.truncated).toBe(false);
  });

  test('keeps head and tail of a large stream and says how much was cut', () => {
    const out = new BoundedOutput(1000);
    out.push(Buffer.from('FIRST\n'));
    for (let i = 0; i < 10_000; i++) out.push(Buffer.from(`line ${i}\n`));
    out.push(Buffer.from('LAST\n'));
    const text = out.toString();
    expect(out.truncated).toBe(true);
    expect(text.startsWith('FIRST\nline 0\n')).toBe(true);
    expect(text.endsWith('line 9999\nLAST\n')).toBe(true);
    expect(text.length).toBeLessThan(1100);
    const m = /\[\.\.\. (\d+) bytes of output cut \((\d+) in total\) \.\.\.\]/.exec(text)!;
    expect(Number(m[2])).toBe(out.totalBytes);
    expect(Number(m[1])).toBeGreaterThanOrEqual(out.totalBytes - 1000);
  });

  test('memory stays bounded with one huge chunk', () => {
    const out = new BoundedOutput(64);
    out.push(Buffer.alloc(10 * 1024 * 1024, 'x'));
    expect(out.toString().length).toBeLessThan(200);
  });

  test('does not split a multi-byte character into garbage', () => {
    const out = new BoundedOutput(10);
    out.push(Buffer.from('ééééééééééééééééééééé'));
    expect(out.toString()).not.toMatch(/\uFFFD/);
  });
});

test('bytes(): every byte while nothing was cut, null once something was', () => {
  const out = new BoundedOutput(8);
  out.push(Buffer.from([0, 1, 2]));
  out.push(Buffer.from([3, 255]));
  expect(out.bytes()).toEqual(Buffer.from([0, 1, 2, 3, 255]));
  out.push(Buffer.from('abcd'));
  expect(out.bytes()).toBeNull();
});
