/**
 * Reads the uncaught exception out of a Python stderr: its type, its message and the traceback.
 * The last traceback wins (with chained exceptions the last one is the one that ended the run).
 */
import type { PythonException } from './schema';

const TRACEBACK_HEADER = 'Traceback (most recent call last):';
/** An exception line: a dotted name, optionally `: message`. */
const EXCEPTION_LINE = /^([A-Za-z_][\w.]*)(?::[ ]?(.*))?$/;
/** Without a traceback header (syntax errors) only names that look like exceptions are trusted. */
const BARE_EXCEPTION_LINE = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration))(?::[ ]?(.*))?$/;

export function parsePythonException(stderr: string): PythonException | null {
  const lines = stderr.split('\n');
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.trimEnd().endsWith(TRACEBACK_HEADER)) {
      start = i;
      break;
    }
  }
  if (start >= 0) {
    // Frames are indented; the first unindented, non-empty line after the header is the exception.
    for (let i = start + 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '' || /^\s/.test(line)) continue;
      const m = EXCEPTION_LINE.exec(line.trimEnd());
      if (!m) break;
      const messageLines = [m[2] ?? ''];
      // A message may continue on following lines, up to a blank line or unittest's rule lines.
      for (let j = i + 1; j < lines.length; j++) {
        const next = lines[j]!;
        if (next.trim() === '' || /^(-{10,}|={10,})$/.test(next.trim()) || next.startsWith(TRACEBACK_HEADER)) break;
        messageLines.push(next);
      }
      return {
        type: m[1]!,
        message: messageLines.join('\n').trimEnd(),
        traceback: lines.slice(start, i + messageLines.length).join('\n'),
      };
    }
  }
  // A SyntaxError at compile time prints `File ..., line N`, the code, a caret, then the error.
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = BARE_EXCEPTION_LINE.exec(lines[i]!.trimEnd());
    if (!m) continue;
    let from = i;
    while (from > 0 && /^\s/.test(lines[from - 1]!)) from--;
    return { type: m[1]!, message: (m[2] ?? '').trimEnd(), traceback: lines.slice(from, i + 1).join('\n') };
  }
  return null;
}

/** The top-level module a ModuleNotFoundError / "No module named" ImportError names, if any. */
export function missingModuleName(exception: PythonException | null, stderr: string): string | null {
  const texts = exception ? [`${exception.type}: ${exception.message}`, stderr] : [stderr];
  for (const text of texts) {
    const m = /(?:ModuleNotFoundError|ImportError): No module named ['"]?([A-Za-z_][\w.]*)['"]?/.exec(text);
    if (m) return m[1]!.split('.')[0]!;
  }
  return null;
}
