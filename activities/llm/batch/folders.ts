/**
 * Every batch, whichever backend answers it, has a folder `<dataDir>/llm-batches/<batch id>/`:
 *
 *   batch.json       its manifest: backend, when it was made, requests and bytes, the service's
 *                    ids once it was handed over, and how it ended
 *   requests.jsonl   its request lines (the Batch API's request format)
 *   results.jsonl    answers, in the Batch API's output format (the service's output file, or
 *                    the file exchange's answer file)
 *   errors.jsonl     failed requests in the same format (the service's error file), when any
 *
 * The folder name is the batch id, checked before any path is made of it, and the file names are
 * fixed, so no path leaves the folder; a file that is not a regular file (a link, a folder) is
 * refused rather than followed. The manifest and request file are written durably (a temporary
 * file flushed to disk, then renamed), the request file before the manifest: a folder without a
 * manifest is a batch whose making was interrupted, never a batch with half its requests.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileDurable, writeStreamDurable } from '../../store/artifacts';
import { BatchIdSchema, batchIdProblem, RemoteIdSchema, type BatchId } from './ids';
import { BATCH_ENDPOINT, BATCH_LIMITS } from './limits';
import { BatchFileError } from './lines';

export const BATCH_MANIFEST_SCHEMA = 'repost.llm-batch/v1';

export const BATCH_BACKENDS = ['openai', 'files'] as const;
export type BatchBackendKind = (typeof BATCH_BACKENDS)[number];

/** How a batch ended: the Batch API's final statuses. */
export const BATCH_END_STATUSES = ['completed', 'expired', 'cancelled', 'failed'] as const;
export type BatchEndStatus = (typeof BATCH_END_STATUSES)[number];

const Iso = z.string().datetime();

export const BatchManifestSchema = z.object({
  schema: z.literal(BATCH_MANIFEST_SCHEMA),
  id: BatchIdSchema,
  backend: z.enum(BATCH_BACKENDS),
  endpoint: z.literal(BATCH_ENDPOINT),
  createdAt: Iso,
  requests: z.number().int().min(1).max(BATCH_LIMITS.maxRequests),
  bytes: z.number().int().min(1).max(BATCH_LIMITS.maxRequestBytes),
  /** `waiting` until the batch has ended and its result files are in the folder. */
  state: z.enum(['waiting', 'ended']),
  /** The Batch API service's ids and last status (openai backend), once handed over. */
  remote: z.object({ batchId: RemoteIdSchema, inputFileId: RemoteIdSchema, status: z.string().max(32), checkedAt: Iso }).optional(),
  endedAt: Iso.optional(),
  endStatus: z.enum(BATCH_END_STATUSES).optional(),
  /** Why the batch as a whole failed or ended early, as the service said it. */
  failure: z.string().max(4000).optional(),
  /** Results loaded with `batches.ts import`: from where, how many, and whether some requests have none. */
  imported: z.object({ at: Iso, source: z.string().max(4096), answered: z.number().int().nonnegative(), partial: z.boolean() }).optional(),
});
export type BatchManifest = z.infer<typeof BatchManifestSchema>;

export const BATCH_FILES = {
  manifest: 'batch.json',
  requests: 'requests.jsonl',
  results: 'results.jsonl',
  errors: 'errors.jsonl',
} as const;
export type BatchFileName = keyof typeof BATCH_FILES;

/** A batch the folders do not hold (or whose making never finished). */
export class BatchNotFoundError extends Error {
  override name = 'BatchNotFoundError';
}

/** The batch folders under one data directory. */
export class BatchFolders {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir, 'llm-batches');
  }

  /** The folder of batch `id`, after checking the id. */
  folderOf(id: string): string {
    const problem = batchIdProblem(id);
    if (problem) throw new BatchNotFoundError(problem);
    return path.join(this.root, id);
  }

  pathOf(id: string, file: BatchFileName): string {
    return path.join(this.folderOf(id), BATCH_FILES[file]);
  }

  /**
   * The size of one of a batch's files, or null when it is absent; anything but a regular file
   * (a symbolic link, a folder) is refused, so no read or write follows a path out of the folder.
   */
  async sizeOf(id: string, file: BatchFileName): Promise<number | null> {
    const folder = this.folderOf(id);
    const dir = await fsp.lstat(folder).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!dir) return null;
    if (!dir.isDirectory()) throw new BatchFileError(`${folder} is not a folder; refusing to follow it`, folder, null);
    const p = this.pathOf(id, file);
    const st = await fsp.lstat(p).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!st) return null;
    if (!st.isFile()) throw new BatchFileError(`${p} is not a regular file; refusing to follow it`, p, null);
    return st.size;
  }

  /** A read stream of one of a batch's files (checked as `sizeOf` does), or null when it is absent. */
  async open(id: string, file: BatchFileName, maxBytes: number): Promise<fs.ReadStream | null> {
    const size = await this.sizeOf(id, file);
    if (size === null) return null;
    const p = this.pathOf(id, file);
    if (size > maxBytes) throw new BatchFileError(`${p} is ${size} bytes, more than the ${maxBytes} a batch file may have`, p, null);
    const handle = await fsp.open(p, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    return handle.createReadStream();
  }

  /** Writes one of a batch's files durably; a link or folder in its place is refused, never written through. */
  async write(id: string, file: Exclude<BatchFileName, 'manifest'>, content: string | Buffer): Promise<void> {
    await this.sizeOf(id, file);
    await writeFileDurable(this.pathOf(id, file), content);
  }

  /**
   * Writes one of a batch's files durably from a stream (a download), refusing more than
   * `maxBytes`; readers see the old file or the whole new one, never a part.
   */
  async writeFrom(id: string, file: Exclude<BatchFileName, 'manifest'>, source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number> {
    await this.sizeOf(id, file);
    const target = this.pathOf(id, file);
    return writeStreamDurable(target, source, (bytes) => {
      if (bytes > maxBytes) throw new BatchFileError(`${target}: more than the ${maxBytes} bytes a batch file may have`, target, null);
    });
  }

  async readManifest(id: string): Promise<BatchManifest> {
    const p = this.pathOf(id, 'manifest');
    const size = await this.sizeOf(id, 'manifest');
    if (size === null) throw new BatchNotFoundError(`no batch ${id} in ${this.root}`);
    if (size > 64 * 1024) throw new BatchFileError(`${p} is ${size} bytes: not a batch manifest`, p, null);
    let raw: unknown;
    try {
      raw = JSON.parse(await fsp.readFile(p, { encoding: 'utf8', flag: fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW }));
    } catch (err) {
      throw new BatchFileError(`${p} is not JSON: ${(err as Error).message}`, p, null);
    }
    const parsed = BatchManifestSchema.safeParse(raw);
    if (!parsed.success) throw new BatchFileError(`${p} is not a batch manifest: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, p, null);
    if (parsed.data.id !== id) throw new BatchFileError(`${p} names batch ${parsed.data.id}, not ${id}`, p, null);
    return parsed.data;
  }

  async writeManifest(manifest: BatchManifest): Promise<BatchManifest> {
    const checked = BatchManifestSchema.parse(manifest);
    await this.sizeOf(checked.id, 'manifest');
    await writeFileDurable(this.pathOf(checked.id, 'manifest'), `${JSON.stringify(checked, null, 2)}\n`);
    return checked;
  }

  /** Whether batch `id` has a manifest (its making finished). */
  async exists(id: string): Promise<boolean> {
    return (await this.sizeOf(id, 'manifest')) !== null;
  }

  /**
   * Every batch the folders hold, oldest first, and the entries that are not batches (a name that
   * is no batch id, a folder without a manifest or with a broken one), each with its problem.
   */
  async list(): Promise<{ batches: BatchManifest[]; problems: { name: string; problem: string }[] }> {
    const entries = await fsp.readdir(this.root, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    const batches: BatchManifest[] = [];
    const problems: { name: string; problem: string }[] = [];
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const idProblem = batchIdProblem(e.name);
      if (idProblem || !e.isDirectory()) {
        // Temporary files of a write in progress are no problem of anyone's.
        if (!e.name.endsWith('.tmp')) problems.push({ name: e.name, problem: idProblem ?? 'not a folder' });
        continue;
      }
      try {
        batches.push(await this.readManifest(e.name));
      } catch (err) {
        problems.push({ name: e.name, problem: err instanceof BatchNotFoundError ? 'no batch.json: the batch was never completely made' : (err as Error).message });
      }
    }
    batches.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { batches, problems };
  }
}
