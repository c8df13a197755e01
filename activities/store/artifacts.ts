/**
 * Content-addressed artifacts: source snapshots, contexts, scripts, logs and LLM
 * transcripts live here so workflow payloads carry only keys (docs/architecture.md, invariant 1).
 *
 * A key is `sha256-<hex>`; the bytes live at `<root>/<hex[0..2]>/<hex>`. Writes are atomic and
 * durable (a temporary file, flushed to disk, then renamed, and the folder flushed), so a crash
 * never leaves a half-written or empty artifact behind and concurrent writers of the same content
 * are harmless. Reading an artifact checks its bytes against its key: a corrupted artifact is an
 * error naming the key, never silently wrong data.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

export type ArtifactKey = string;

const KEY_RE = /^sha256-([0-9a-f]{64})$/;

export function hashContent(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export function isArtifactKey(value: string): boolean {
  return KEY_RE.test(value);
}

/** Writes a file atomically: readers see the old content or the new, never a prefix. */
export async function writeFileAtomic(file: string, content: string | Buffer): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await fsp.writeFile(tmp, content);
  await fsp.rename(tmp, file);
}

/**
 * Writes a file atomically and durably: the temporary file's data reach the disk before the
 * rename, and the rename before this returns (the folder is flushed), so after a crash the file
 * holds the old content or the whole new one, never an empty or partial file.
 */
export async function writeFileDurable(file: string, content: string | Buffer): Promise<void> {
  await writeStreamDurable(file, [typeof content === 'string' ? Buffer.from(content) : content]);
}

/**
 * `writeFileDurable` from a stream: chunk by chunk into a temporary file, synced, renamed, the
 * folder synced. `check` sees the byte count after each chunk and may throw to refuse the file
 * (nothing is left behind). Returns the bytes written.
 */
export async function writeStreamDurable(
  file: string,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  check: (bytes: number) => void = () => undefined,
): Promise<number> {
  const dir = path.dirname(file);
  await fsp.mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fsp.open(tmp, 'wx');
  let bytes = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      check(bytes);
      await handle.write(chunk);
    }
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await fsp.rename(tmp, file);
  const folder = await fsp.open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return bytes;
}

/** An artifact whose bytes do not hash to its key (a damaged disk, a hand edit, a torn copy). */
export class CorruptArtifactError extends Error {
  override name = 'CorruptArtifactError';
}

/** The content of artifact `key` read from `where`, checked against the key. */
export function verifiedContent(key: ArtifactKey, bytes: Buffer, where: string): string {
  const actual = `sha256-${hashContent(bytes)}`;
  if (actual !== key) throw new CorruptArtifactError(`artifact ${key} in ${where} is corrupt: its ${bytes.length} byte(s) hash to ${actual}`);
  return bytes.toString('utf8');
}

/** The artifact part of the store: content-addressed texts and JSON values. */
export interface Artifacts {
  put(content: string | Buffer): Promise<ArtifactKey>;
  putJson(value: unknown): Promise<ArtifactKey>;
  has(key: ArtifactKey): Promise<boolean>;
  get(key: ArtifactKey): Promise<string>;
  getJson<T = unknown>(key: ArtifactKey): Promise<T>;
}

/** Code that only needs artifacts takes any store by this name. */
export type ArtifactStore = Artifacts;

export function artifactKeyOf(content: string | Buffer): ArtifactKey {
  return `sha256-${hashContent(content)}`;
}

/** Artifacts as files: `<root>/<hex[0..2]>/<hex>`. */
export class FileArtifacts implements Artifacts {
  constructor(readonly root: string) {}

  pathOf(key: ArtifactKey): string {
    const m = KEY_RE.exec(key);
    if (!m) throw new Error(`not an artifact key: ${JSON.stringify(key)}`);
    const hex = m[1]!;
    return path.join(this.root, hex.slice(0, 2), hex);
  }

  async put(content: string | Buffer): Promise<ArtifactKey> {
    const key = artifactKeyOf(content);
    const file = this.pathOf(key);
    // An artifact already there is kept, unless its size shows it damaged: then it is written again.
    const size = typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.length;
    if (fs.statSync(file, { throwIfNoEntry: false })?.size !== size) await writeFileDurable(file, content);
    return key;
  }

  async putJson(value: unknown): Promise<ArtifactKey> {
    return this.put(JSON.stringify(value));
  }

  async has(key: ArtifactKey): Promise<boolean> {
    return fs.existsSync(this.pathOf(key));
  }

  async get(key: ArtifactKey): Promise<string> {
    let bytes: Buffer;
    try {
      bytes = await fsp.readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`artifact ${key} is missing from ${this.root}`);
      throw err;
    }
    return verifiedContent(key, bytes, this.root);
  }

  async getJson<T = unknown>(key: ArtifactKey): Promise<T> {
    return JSON.parse(await this.get(key)) as T;
  }
}
