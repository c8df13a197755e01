/**
 * Content-addressed artifacts: source snapshots, contexts, scripts, logs and LLM
 * transcripts live here so workflow payloads carry only keys (docs/architecture.md, invariant 1).
 *
 * A key is `sha256-<hex>`; the bytes live at `<root>/<hex[0..2]>/<hex>`. Writes are atomic
 * (temporary file, then rename), so a crash never leaves a half-written artifact behind and
 * concurrent writers of the same content are harmless.
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
    if (!fs.existsSync(file)) await writeFileAtomic(file, content);
    return key;
  }

  async putJson(value: unknown): Promise<ArtifactKey> {
    return this.put(JSON.stringify(value));
  }

  async has(key: ArtifactKey): Promise<boolean> {
    return fs.existsSync(this.pathOf(key));
  }

  async get(key: ArtifactKey): Promise<string> {
    try {
      return await fsp.readFile(this.pathOf(key), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`artifact ${key} is missing from ${this.root}`);
      throw err;
    }
  }

  async getJson<T = unknown>(key: ArtifactKey): Promise<T> {
    return JSON.parse(await this.get(key)) as T;
  }
}
