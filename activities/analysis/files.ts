/**
 * Finding and reading the Python files of a repository tree. Anything that cannot be trusted
 * or decoded becomes a skip with a reason instead of an exception: one odd file must never stop
 * the analysis of a repository.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SkippedFile } from './types';

export interface PythonFile {
  /** Relative to the root, '/' separators. */
  path: string;
  text: string;
}

export interface ReadFilesResult {
  files: PythonFile[];
  skipped: SkippedFile[];
}

export function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** PEP 263: a coding declaration in one of the first two lines. */
const CODING_RE = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;

/**
 * Decodes a source file the way Python does: UTF-8 (a BOM is dropped) unless a coding
 * declaration names another encoding. Returns null when the bytes are not valid in it.
 */
export function decodePython(bytes: Buffer): { text: string } | { error: string } {
  let start = 0;
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  const head = bytes.subarray(start, Math.min(bytes.length, start + 512)).toString('latin1').split(/\r?\n|\r/).slice(0, 2);
  let encoding = 'utf-8';
  for (const line of head) {
    const m = CODING_RE.exec(line);
    if (m) {
      encoding = m[1]!.toLowerCase();
      break;
    }
    // The declaration must come before any code: a non-comment line ends the search.
    if (!/^[ \t\f]*(#.*)?$/.test(line)) break;
  }
  encoding = encoding.replace(/_/g, '-');
  if (encoding === 'utf8' || encoding.startsWith('utf-8')) encoding = 'utf-8';
  const body = bytes.subarray(start);
  // Node's TextDecoder may lack legacy codecs (small ICU), so Python's common ones are decoded here.
  if (/^(latin-?1|iso-?8859-1|iso8859-1|l1|cp819)$/.test(encoding)) return { text: body.toString('latin1') };
  if (encoding === 'ascii' || encoding === 'us-ascii') {
    return body.every((b) => b < 0x80) ? { text: body.toString('latin1') } : { error: 'not valid ascii text' };
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch {
    return { error: `unsupported source encoding ${JSON.stringify(encoding)}` };
  }
  try {
    return { text: decoder.decode(body) };
  } catch {
    return { error: `not valid ${encoding === 'utf-8' ? 'UTF-8' : encoding} text` };
  }
}

export interface ReadOptions {
  ignoreDirs: string[];
  maxFileBytes: number;
}

/**
 * Every `.py` file under `root`, in sorted order so that results are deterministic. The reads are
 * synchronous: thousands of small files cost one thread-pool round trip per call otherwise (about
 * half the time of parsing them), and the parse that follows blocks the thread anyway.
 */
export async function readPythonFiles(rootDir: string, options: ReadOptions): Promise<ReadFilesResult> {
  return readPythonFilesSync(rootDir, options);
}

function readPythonFilesSync(rootDir: string, options: ReadOptions): ReadFilesResult {
  const root = fs.realpathSync.native(rootDir);
  const files: PythonFile[] = [];
  const skipped: SkippedFile[] = [];
  const ignore = new Set(options.ignoreDirs);

  const statOrNull = (p: string): fs.Stats | null => {
    try {
      return fs.statSync(p);
    } catch {
      return null;
    }
  };

  function walk(dir: string): void {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      skipped.push({ path: toPosix(path.relative(root, dir)) || '.', reason: `unreadable directory: ${(err as NodeJS.ErrnoException).code ?? err}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      const rel = toPosix(path.relative(root, abs));
      if (entry.isSymbolicLink()) {
        // A link is followed only when it stays inside the tree (and never for directories,
        // which could loop); a link escaping the tree could read anything on the host.
        let real: string;
        try {
          real = fs.realpathSync.native(abs);
        } catch {
          if (rel.endsWith('.py')) skipped.push({ path: rel, reason: 'dangling symlink' });
          continue;
        }
        if (!isInside(root, real)) {
          skipped.push({ path: rel, reason: 'symlink points outside the repository' });
          continue;
        }
        const st = statOrNull(real);
        if (st && st.isFile() && rel.endsWith('.py')) readOne(abs, rel, st.size);
        continue;
      }
      if (entry.isDirectory()) {
        if (ignore.has(entry.name) || entry.name.endsWith('.egg-info')) continue;
        walk(abs);
      } else if (entry.isFile() && entry.name.endsWith('.py')) {
        const st = statOrNull(abs);
        if (st) readOne(abs, rel, st.size);
      }
    }
  }

  function readOne(abs: string, rel: string, size: number): void {
    if (size > options.maxFileBytes) {
      skipped.push({ path: rel, reason: `file too large (${size} bytes > ${options.maxFileBytes})` });
      return;
    }
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(abs);
    } catch (err) {
      skipped.push({ path: rel, reason: `unreadable file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
      return;
    }
    if (bytes.includes(0)) {
      skipped.push({ path: rel, reason: 'binary content (NUL byte)' });
      return;
    }
    const decoded = decodePython(bytes);
    if ('error' in decoded) skipped.push({ path: rel, reason: decoded.error });
    else files.push({ path: rel, text: decoded.text });
  }

  walk(root);
  return { files, skipped };
}
