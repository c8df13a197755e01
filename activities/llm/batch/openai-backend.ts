/**
 * The Batch API of an OpenAI-compatible service, through the `openai` client: the request file
 * is uploaded (`files.create`, purpose `batch`, streamed from the folder), a batch is created on
 * it (`batches.create`, 24-hour window) carrying our batch id in its metadata, and it is polled
 * with `batches.retrieve`. Once it has ended, its output and error files are downloaded
 * (`files.content`) into the folder, checked line by line, and the batch is marked ended.
 *
 * Handing over is idempotent across restarts: the service's ids are written to the manifest
 * as soon as the batch is created, and a batch whose manifest has none (a restart between the
 * two) is first looked for among the service's batches by its metadata, so it is never created
 * twice. A batch the service failed as a whole (`failed`) ends with the service's reasons, and
 * each of its requests gets a transient "no answer": asking again, in another batch, can work.
 *
 * The client's own faults (the service unreachable, a 5xx, a bad key) are thrown as the live
 * path classifies them (`classifyLlmError`); the batch stays as it was and the next poll tries again.
 */
import { Readable } from 'node:stream';
import OpenAI, { toStreamingFile } from 'openai';
import { z } from 'zod';
import { classifyLlmError, LlmPermanentError, LlmTransientError } from '../errors';
import { makeBatchFolder, type BatchBackend, type BatchPoll, type PreparedBatch } from './backend';
import type { BatchFolders, BatchManifest } from './folders';
import { RemoteIdSchema, type BatchId } from './ids';
import { BATCH_COMPLETION_WINDOW, BATCH_ENDPOINT, BATCH_LIMITS } from './limits';
import { BatchFileError } from './lines';
import { readBatchRequests, scanBatchResults } from './results';

/** The metadata key that carries our batch id on the service's batch. */
export const BATCH_METADATA_KEY = 'repost_batch';

/** The parts of the service's batch object this backend reads, checked (they come from outside). */
const RemoteBatchSchema = z.object({
  id: RemoteIdSchema,
  status: z.enum(['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled']),
  input_file_id: RemoteIdSchema,
  output_file_id: RemoteIdSchema.nullish(),
  error_file_id: RemoteIdSchema.nullish(),
  created_at: z.number().optional(),
  request_counts: z.object({ total: z.number(), completed: z.number(), failed: z.number() }).nullish(),
  errors: z
    .object({ data: z.array(z.object({ code: z.string().nullish(), message: z.string().nullish(), line: z.number().nullish() }).passthrough()).nullish() })
    .passthrough()
    .nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
type RemoteBatch = z.infer<typeof RemoteBatchSchema>;

const ENDED = new Set(['completed', 'expired', 'cancelled', 'failed']);

export interface OpenAiBatchBackendOptions {
  client: OpenAI;
  folders: BatchFolders;
  clock?: () => Date;
  /** How many of the service's most recent batches to look through for one made before a restart (default 1,000). */
  lookBack?: number;
}

export class OpenAiBatchBackend implements BatchBackend {
  readonly kind = 'openai' as const;
  readonly folders: BatchFolders;
  private readonly client: OpenAI;
  private readonly clock: () => Date;
  private readonly lookBack: number;

  constructor(options: OpenAiBatchBackendOptions) {
    this.client = options.client;
    this.folders = options.folders;
    this.clock = options.clock ?? (() => new Date());
    this.lookBack = options.lookBack ?? 1000;
  }

  async submit(batch: PreparedBatch): Promise<BatchManifest> {
    const manifest = await makeBatchFolder(this.folders, this.kind, batch, this.clock());
    return manifest.state === 'waiting' && !manifest.remote ? this.handOver(manifest) : manifest;
  }

  async poll(id: BatchId): Promise<BatchPoll> {
    let manifest = await this.folders.readManifest(id);
    if (manifest.state === 'ended') return { state: 'ended', manifest };
    if (!manifest.remote) {
      manifest = await this.handOver(manifest);
      return { state: 'waiting', manifest, detail: `handed over as ${manifest.remote!.batchId}` };
    }
    const remote = await this.call(id, () => this.client.batches.retrieve(manifest.remote!.batchId)).then((b) => this.checked(b, id));
    if (!ENDED.has(remote.status)) {
      if (remote.status !== manifest.remote.status) manifest = await this.folders.writeManifest({ ...manifest, remote: { ...manifest.remote, status: remote.status, checkedAt: this.clock().toISOString() } });
      const counts = remote.request_counts;
      return { state: 'waiting', manifest, detail: `${remote.status}${counts ? `, ${counts.completed + counts.failed} of ${counts.total} done` : ''}` };
    }
    return { state: 'ended', manifest: await this.collect(manifest, remote) };
  }

  async cancel(id: BatchId): Promise<BatchPoll> {
    const now = await this.poll(id);
    if (now.state === 'ended') return now;
    await this.call(id, () => this.client.batches.cancel(now.manifest.remote!.batchId));
    return this.poll(id);
  }

  /** Uploads the request file and creates the service's batch, unless one was created before a restart. */
  private async handOver(manifest: BatchManifest): Promise<BatchManifest> {
    const id = manifest.id;
    const remote =
      (await this.findMadeBefore(manifest)) ??
      (await this.call(id, async () => {
        const requests = await this.folders.open(id, 'requests', BATCH_LIMITS.maxRequestBytes);
        if (!requests) throw new BatchFileError(`${this.folders.pathOf(id, 'requests')} is missing`, this.folders.pathOf(id, 'requests'), null);
        const file = await this.client.files
          .create({ file: toStreamingFile(requests, 'requests.jsonl', { type: 'application/jsonl' }), purpose: 'batch' })
          .finally(() => requests.destroy());
        const inputFileId = this.remoteId(file.id, id);
        return this.checked(
          await this.client.batches.create({ input_file_id: inputFileId, endpoint: BATCH_ENDPOINT, completion_window: BATCH_COMPLETION_WINDOW, metadata: { [BATCH_METADATA_KEY]: id } }),
          id,
        );
      }));
    return this.folders.writeManifest({ ...manifest, remote: { batchId: remote.id, inputFileId: remote.input_file_id, status: remote.status, checkedAt: this.clock().toISOString() } });
  }

  /** The service's batch carrying this batch's id in its metadata, among its most recent ones. */
  private async findMadeBefore(manifest: BatchManifest): Promise<RemoteBatch | null> {
    return this.call(manifest.id, async () => {
      let seen = 0;
      for await (const raw of this.client.batches.list({ limit: 100 })) {
        if (++seen > this.lookBack) break;
        const b = RemoteBatchSchema.safeParse(raw);
        if (b.success && b.data.metadata?.[BATCH_METADATA_KEY] === manifest.id) return b.data;
      }
      return null;
    });
  }

  /** Downloads an ended batch's output and error files into its folder, checks them, and marks it ended. */
  private async collect(manifest: BatchManifest, remote: RemoteBatch): Promise<BatchManifest> {
    const id = manifest.id;
    for (const [name, fileId] of [
      ['results', remote.output_file_id],
      ['errors', remote.error_file_id],
    ] as const) {
      if (!fileId) continue;
      const response = await this.call(id, () => this.client.files.content(fileId));
      if (!response.body) throw new BatchFileError(`batch ${id}: the service sent no content for file ${fileId}`, this.folders.pathOf(id, name), null);
      await this.folders.writeFrom(id, name, Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), BATCH_LIMITS.maxResultBytes);
    }
    const scan = await scanBatchResults(this.folders, id, await readBatchRequests(this.folders, id));
    if (scan.tornTail) throw new BatchFileError(`batch ${id}: the service's output file ends with a line cut short`, this.folders.pathOf(id, 'results'), null);
    const failure = this.failureOf(remote);
    return this.folders.writeManifest({
      ...manifest,
      state: 'ended',
      endStatus: remote.status as 'completed' | 'expired' | 'cancelled' | 'failed',
      endedAt: this.clock().toISOString(),
      remote: { ...manifest.remote!, status: remote.status, checkedAt: this.clock().toISOString() },
      ...(failure ? { failure } : {}),
    });
  }

  /** Why requests of an ended batch may have no answer, in the service's words. */
  private failureOf(remote: RemoteBatch): string | undefined {
    const reasons = (remote.errors?.data ?? []).map((e) => `${e.code ?? 'error'}${e.line != null ? ` (line ${e.line})` : ''}: ${e.message ?? ''}`.trim());
    if (remote.status === 'completed' && reasons.length === 0) return undefined;
    const head = remote.status === 'completed' ? 'the service reported' : `the service's batch ${remote.id} ended ${remote.status}`;
    return `${head}${reasons.length ? `: ${reasons.join('; ')}` : ''}`.slice(0, 4000);
  }

  private checked(raw: unknown, id: string): RemoteBatch {
    const parsed = RemoteBatchSchema.safeParse(raw);
    if (!parsed.success) throw classifyLlmError(new SyntaxError(`not a batch object: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`), this.where(id));
    return parsed.data;
  }

  private remoteId(value: unknown, id: string): string {
    const parsed = RemoteIdSchema.safeParse(value);
    if (!parsed.success) throw classifyLlmError(new SyntaxError(`not a file id: ${JSON.stringify(String(value).slice(0, 80))}`), this.where(id));
    return parsed.data;
  }

  private where(id: string): { model: string; baseURL: string } {
    return { model: `(batch ${id})`, baseURL: this.client.baseURL };
  }

  /** A call to the service; its faults are classified as a live call's are. */
  private async call<T>(id: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof BatchFileError || err instanceof LlmTransientError || err instanceof LlmPermanentError) throw err;
      throw classifyLlmError(err, this.where(id));
    }
  }
}
