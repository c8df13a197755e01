/**
 * The file exchange: a batch's requests wait in `<dataDir>/llm-batches/<id>/requests.jsonl` and
 * its answers are read from `results.jsonl` beside it, in the Batch API's output format (what
 * `vllm run-batch -i requests.jsonl -o results.jsonl` writes, or any program answering the
 * same lines; failures may also go to `errors.jsonl`). Nothing is sent anywhere.
 *
 * The batch ends when its result files answer every request (or when results were imported on
 * purpose as partial, or the batch is cancelled). A result file still being written (its last line
 * cut short, no final newline) or answering only some requests is waited for; a line that breaks
 * the format or names a request the batch does not have is an error naming the file and line.
 */
import type { BatchBackend, BatchPoll, PreparedBatch } from './backend';
import { makeBatchFolder } from './backend';
import type { BatchFolders, BatchManifest } from './folders';
import type { BatchId } from './ids';
import { readBatchRequests, scanBatchResults } from './results';

export class FileExchangeBackend implements BatchBackend {
  readonly kind = 'files' as const;

  constructor(
    readonly folders: BatchFolders,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async submit(batch: PreparedBatch): Promise<BatchManifest> {
    return makeBatchFolder(this.folders, this.kind, batch, this.clock());
  }

  async poll(id: BatchId): Promise<BatchPoll> {
    const manifest = await this.folders.readManifest(id);
    if (manifest.state === 'ended') return { state: 'ended', manifest };
    const requests = await readBatchRequests(this.folders, id);
    const scan = await scanBatchResults(this.folders, id, requests);
    const results = this.folders.pathOf(id, 'results');
    if (scan.files.length === 0) return { state: 'waiting', manifest, detail: `waiting for ${results}` };
    const answered = scan.answered.size;
    if (scan.tornTail) return { state: 'waiting', manifest, detail: `${results} is still being written (${answered} of ${manifest.requests} answered so far)` };
    if (answered < manifest.requests && !manifest.imported?.partial) return { state: 'waiting', manifest, detail: `${results} answers ${answered} of ${manifest.requests} requests` };
    return { state: 'ended', manifest: await this.end(manifest, 'completed') };
  }

  async cancel(id: BatchId): Promise<BatchPoll> {
    const manifest = await this.folders.readManifest(id);
    if (manifest.state === 'ended') return { state: 'ended', manifest };
    return { state: 'ended', manifest: await this.end(manifest, 'cancelled', 'the batch was cancelled before its results arrived') };
  }

  private end(manifest: BatchManifest, endStatus: 'completed' | 'cancelled', failure?: string): Promise<BatchManifest> {
    return this.folders.writeManifest({ ...manifest, state: 'ended', endStatus, endedAt: this.clock().toISOString(), ...(failure ? { failure } : {}) });
  }
}
