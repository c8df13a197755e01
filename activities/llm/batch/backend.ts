/**
 * The one small interface both batch backends speak:
 *
 *   openai  the Batch API of an OpenAI-compatible service (`files.create`, `batches.create`,
 *           polled with `batches.retrieve`, answers read with `files.content`)
 *   files   the file exchange: the request file waits in its folder until `results.jsonl`
 *           appears beside it (written by another program, or loaded with `batches.ts import`)
 *
 * Either way the batch's folder holds its manifest, its requests and, once it has ended, its
 * result files in the Batch API's output format, so one reader (`readBatchOutcomes`) turns them
 * into outcomes. Both are safe to call again after a restart: `submit` of a batch whose folder
 * already exists hands over nothing twice, and `poll` needs only the batch id.
 */
import { BatchFolders, BATCH_MANIFEST_SCHEMA, type BatchBackendKind, type BatchManifest } from './folders';
import type { BatchId } from './ids';
import { BATCH_ENDPOINT, BATCH_LIMITS } from './limits';
import { jsonlText, type BatchRequestLine } from './lines';

/** A batch ready to go: its id and its request lines. */
export interface PreparedBatch {
  id: BatchId;
  lines: BatchRequestLine[];
}

export type BatchPoll =
  /** Not answered yet; `detail` says what it waits for (the service's status, the file it waits for). */
  | { state: 'waiting'; manifest: BatchManifest; detail: string }
  /** Ended: its result files are in its folder (`readBatchOutcomes`). */
  | { state: 'ended'; manifest: BatchManifest };

export interface BatchBackend {
  readonly kind: BatchBackendKind;
  readonly folders: BatchFolders;
  /** Writes the batch's folder and hands the batch over; a batch already made is not made or handed over again. */
  submit(batch: PreparedBatch): Promise<BatchManifest>;
  /** Where batch `id` stands now; when it has just ended, its result files are written first. */
  poll(id: BatchId): Promise<BatchPoll>;
  /** Stops waiting for batch `id`: requests without an answer by then end without one. */
  cancel(id: BatchId): Promise<BatchPoll>;
}

/** A batch that breaks the Batch API's limits or its own rules (empty, a custom_id twice). */
export class BatchRejectedError extends Error {
  override name = 'BatchRejectedError';
}

/**
 * Makes batch `batch.id`'s folder: the request file, then the manifest (state `waiting`). When
 * the folder already has a manifest (the batch was made before a restart), it is returned as it
 * is and nothing is written.
 */
export async function makeBatchFolder(folders: BatchFolders, backend: BatchBackendKind, batch: PreparedBatch, now: Date): Promise<BatchManifest> {
  if (await folders.exists(batch.id)) {
    const made = await folders.readManifest(batch.id);
    if (made.backend !== backend) throw new BatchRejectedError(`batch ${batch.id} was made for the ${made.backend} backend, not ${backend}`);
    return made;
  }
  if (batch.lines.length === 0) throw new BatchRejectedError(`batch ${batch.id} has no requests`);
  if (batch.lines.length > BATCH_LIMITS.maxRequests) throw new BatchRejectedError(`batch ${batch.id} has ${batch.lines.length} requests, more than the ${BATCH_LIMITS.maxRequests} a batch may have`);
  const ids = new Set<string>();
  for (const line of batch.lines) {
    if (ids.has(line.custom_id)) throw new BatchRejectedError(`batch ${batch.id} asks custom_id ${line.custom_id} twice`);
    ids.add(line.custom_id);
    if (line.url !== BATCH_ENDPOINT) throw new BatchRejectedError(`batch ${batch.id}: request ${line.custom_id} is for ${line.url}, not ${BATCH_ENDPOINT}`);
  }
  const text = jsonlText(batch.lines);
  const bytes = Buffer.byteLength(text);
  if (bytes > BATCH_LIMITS.maxRequestBytes) throw new BatchRejectedError(`batch ${batch.id} is ${bytes} bytes of requests, more than the ${BATCH_LIMITS.maxRequestBytes} a batch may have`);
  await folders.write(batch.id, 'requests', text);
  return folders.writeManifest({
    schema: BATCH_MANIFEST_SCHEMA,
    id: batch.id,
    backend,
    endpoint: BATCH_ENDPOINT,
    createdAt: now.toISOString(),
    requests: batch.lines.length,
    bytes,
    state: 'waiting',
  });
}
