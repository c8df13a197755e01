/**
 * Batch mode's collector: the requests LLM activities hand over, gathered into batches and
 * answered back to the activities that asked them.
 *
 *   hand-over   an activity in batch mode stores its request (`<dataDir>/llm-pending/<id>.json`:
 *               the request line, the activity's task token, its type and input) durably, then
 *               ends its attempt as waiting (asynchronous completion); the collector adds it to
 *               the open batch
 *   flush       the open batch goes out at `maxRequests` requests, `maxBytes` of request file, or
 *               `maxWaitSec` after its first request (flush-policy.ts): its folder is written
 *               and the backend hands it over, then each request notes its batch
 *   poll        every `pollMs`, each waiting batch is asked where it stands (backend.poll)
 *   delivery    once a batch has ended, each of its requests is answered: the activity is run
 *               again in this process with the batch's answer in hand (`deliver`: the same
 *               parsing, sanity checks, recording, caching and pricing as live), and its result or
 *               failure completes the waiting attempt by task token; the request is then removed
 *
 * Everything it knows is in files, so a restarted process picks up where the last one was: the
 * requests still waiting, the batches they went into (a request whose batch was written but not
 * yet noted is found in the batch's request file), and the batches' own folders. Work is done one
 * step at a time (one chain), so a flush and a delivery never race. One collector serves a data
 * directory: run batch mode's LLM workers as one process per data directory.
 */
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileDurable } from '../../store/artifacts';
import type { DeliveredBatchAnswer } from '../gateway';
import type { BatchBackend } from './backend';
import { BatchAccumulator, type FlushPolicy, type Flushed } from './flush-policy';
import { BatchIdSchema, newBatchId, type BatchId } from './ids';
import { batchRequestLine, BatchRequestLineSchema, lineBytes, type BatchRequestLine } from './lines';
import { readBatchOutcomes, readBatchRequests } from './results';
import type { ChatCall } from '../completion';

export const PENDING_SCHEMA = 'repost.llm-pending/v1';

/** The custom_id of a handed-over request: also its file's name, so only this shape is ever read or written. */
const PENDING_ID = /^q-[0-9a-f]{24}$/;
export const newPendingId = (): string => `q-${randomBytes(12).toString('hex')}`;

export const PendingRequestSchema = z.object({
  schema: z.literal(PENDING_SCHEMA),
  customId: z.string().regex(PENDING_ID),
  /** The waiting attempt's task token, base64. */
  taskToken: z.string().min(1).max(64 * 1024),
  activityType: z.string().min(1).max(200),
  /** The activity's input, as it was called: what it is run again with when the answer arrives. */
  input: z.unknown(),
  cacheKey: z.string().min(1).max(200),
  step: z.string().max(64),
  functionId: z.string().max(512),
  runId: z.string().max(512).optional(),
  line: BatchRequestLineSchema,
  bytes: z.number().int().positive(),
  enqueuedAt: z.string().datetime(),
  batchId: BatchIdSchema.optional(),
});
export type PendingRequest = z.infer<typeof PendingRequestSchema>;

/** What the collector needs of Temporal: completing and failing a waiting attempt by its token. */
export interface AsyncCompletion {
  complete(taskToken: Uint8Array, result: unknown): Promise<void>;
  fail(taskToken: Uint8Array, err: Error): Promise<void>;
}

export interface BatchCollectorOptions {
  dataDir: string;
  backend: BatchBackend;
  policy: FlushPolicy;
  pollMs: number;
  completion: AsyncCompletion;
  /** Runs the request's activity again with the batch's answer in hand; resolves to its result or rejects with its failure. */
  deliver(pending: PendingRequest, answer: DeliveredBatchAnswer): Promise<unknown>;
  clock?: () => number;
  log?: (line: string) => void;
}

/** A request waiting for its answer, as the status view shows it. */
export interface WaitingRequest {
  customId: string;
  step: string;
  functionId: string;
  runId?: string;
  batchId?: string;
  enqueuedAt: string;
}

export class BatchCollector {
  readonly pendingDir: string;
  private readonly clock: () => number;
  private readonly accumulator: BatchAccumulator<PendingRequest>;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly waiting = new Set<BatchId>();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly options: BatchCollectorOptions) {
    this.pendingDir = path.resolve(options.dataDir, 'llm-pending');
    this.clock = options.clock ?? Date.now;
    this.accumulator = new BatchAccumulator(options.policy, this.clock);
  }

  /** The request line of a call, under a new custom_id. */
  static lineOf(call: ChatCall): BatchRequestLine {
    return batchRequestLine(newPendingId(), call);
  }

  /** Reads what a previous process left (requests waiting, batches waiting), then looks at the batches every `pollMs`. */
  async start(): Promise<void> {
    await this.exclusive(() => this.recover());
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  /** Stores a handed-over request durably and adds it to the open batch (flushed when due). */
  async enqueue(request: Omit<PendingRequest, 'schema' | 'bytes' | 'enqueuedAt' | 'customId' | 'line'> & { line: BatchRequestLine }): Promise<void> {
    const pending: PendingRequest = PendingRequestSchema.parse({
      ...request,
      schema: PENDING_SCHEMA,
      customId: request.line.custom_id,
      bytes: lineBytes(request.line),
      enqueuedAt: new Date(this.clock()).toISOString(),
    });
    await this.exclusive(async () => {
      await this.writePending(pending);
      this.pending.set(pending.customId, pending);
      for (const due of this.accumulator.add(pending, pending.bytes)) await this.flush(due);
    });
  }

  /** One round of work now (the timer calls it; a test may too): flush a due batch, look at every waiting batch, deliver what ended. */
  tick(): Promise<void> {
    return this.exclusive(async () => {
      const due = this.accumulator.takeDue();
      if (due) await this.flush(due);
      for (const id of [...this.waiting]) {
        try {
          const now = await this.options.backend.poll(id);
          if (now.state === 'ended') await this.deliverBatch(id);
        } catch (err) {
          this.options.log?.(`batch ${id}: ${(err as Error).message}`);
        }
      }
    });
  }

  /** The requests waiting for an answer, oldest first. */
  waitingRequests(): WaitingRequest[] {
    return [...this.pending.values()]
      .map((p) => ({ customId: p.customId, step: p.step, functionId: p.functionId, enqueuedAt: p.enqueuedAt, ...(p.runId ? { runId: p.runId } : {}), ...(p.batchId ? { batchId: p.batchId } : {}) }))
      .sort((a, b) => a.enqueuedAt.localeCompare(b.enqueuedAt));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((err) => this.options.log?.(`batch collector: ${(err as Error).message}`))
        .finally(() => this.schedule());
    }, this.options.pollMs);
    this.timer.unref();
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private fileOf(customId: string): string {
    if (!PENDING_ID.test(customId)) throw new Error(`not a pending request id: ${customId}`);
    return path.join(this.pendingDir, `${customId}.json`);
  }

  private async writePending(p: PendingRequest): Promise<void> {
    await fsp.mkdir(this.pendingDir, { recursive: true });
    await writeFileDurable(this.fileOf(p.customId), JSON.stringify(p));
  }

  private async recover(): Promise<void> {
    let names: string[] = [];
    try {
      names = await fsp.readdir(this.pendingDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of names.sort()) {
      if (!name.endsWith('.json') || !PENDING_ID.test(name.slice(0, -5))) continue;
      try {
        const p = PendingRequestSchema.parse(JSON.parse(await fsp.readFile(path.join(this.pendingDir, name), 'utf8')));
        this.pending.set(p.customId, p);
      } catch (err) {
        this.options.log?.(`${path.join(this.pendingDir, name)}: not a waiting request (${(err as Error).message})`);
      }
    }
    // A request whose batch was written before the process stopped, but not yet noted on the request.
    const unassigned = new Set([...this.pending.values()].filter((p) => !p.batchId).map((p) => p.customId));
    const { batches } = await this.options.backend.folders.list();
    for (const b of batches) {
      const mine = [...this.pending.values()].some((p) => p.batchId === b.id);
      if (unassigned.size > 0) {
        for (const id of (await readBatchRequests(this.options.backend.folders, b.id)).ids) {
          if (!unassigned.has(id)) continue;
          unassigned.delete(id);
          const p = { ...this.pending.get(id)!, batchId: b.id };
          await this.writePending(p);
          this.pending.set(id, p);
          this.waiting.add(b.id);
        }
      }
      if (mine) this.waiting.add(b.id);
    }
    for (const id of unassigned) {
      const p = this.pending.get(id)!;
      for (const due of this.accumulator.add(p, p.bytes)) await this.flush(due);
    }
    if (this.pending.size > 0) this.options.log?.(`batch collector: ${this.pending.size} request(s) waiting, in ${this.waiting.size} batch(es)`);
  }

  private async flush(due: Flushed<PendingRequest>): Promise<void> {
    const id = newBatchId(new Date(this.clock()));
    try {
      await this.options.backend.submit({ id, lines: due.items.map((p) => p.line as BatchRequestLine) });
    } catch (err) {
      // The folder may be written and the hand-over failed: polling hands it over again. Without a folder, the requests wait for the next batch.
      if (!(await this.options.backend.folders.exists(id))) {
        this.options.log?.(`batch ${id} could not be made (${(err as Error).message}); its ${due.items.length} request(s) wait for the next one`);
        for (const p of due.items) this.accumulator.add(p, p.bytes);
        return;
      }
      this.options.log?.(`batch ${id} not handed over yet: ${(err as Error).message}`);
    }
    for (const p of due.items) {
      const noted = { ...p, batchId: id };
      await this.writePending(noted);
      this.pending.set(p.customId, noted);
    }
    this.waiting.add(id);
    this.options.log?.(`batch ${id}: ${due.items.length} request(s) sent (${due.reason})`);
  }

  private async deliverBatch(id: BatchId): Promise<void> {
    const folders = this.options.backend.folders;
    const manifest = await folders.readManifest(id);
    const endedAt = manifest.endedAt ? Date.parse(manifest.endedAt) : this.clock();
    for await (const outcome of readBatchOutcomes(folders, manifest)) {
      const p = this.pending.get(outcome.customId);
      if (!p || p.batchId !== id) continue;
      const token = Buffer.from(p.taskToken, 'base64');
      const answer: DeliveredBatchAnswer = { outcome, batchId: id, cacheKey: p.cacheKey, waitedMs: Math.max(0, endedAt - Date.parse(p.enqueuedAt)) };
      let settle: () => Promise<void>;
      try {
        const result = await this.options.deliver(p, answer);
        settle = () => this.options.completion.complete(token, result);
      } catch (err) {
        settle = () => this.options.completion.fail(token, err instanceof Error ? err : new Error(String(err)));
      }
      try {
        await settle();
      } catch (err) {
        // The attempt is gone (timed out, its workflow ended): nothing waits for this answer any more.
        // Any other failure (the Temporal server away) is tried again at the next poll.
        if (!isGone(err)) {
          this.options.log?.(`batch ${id}: request ${p.customId} not delivered yet: ${(err as Error).message}`);
          continue;
        }
      }
      await this.forget(p);
    }
    if (![...this.pending.values()].some((p) => p.batchId === id)) this.waiting.delete(id);
  }

  private async forget(p: PendingRequest): Promise<void> {
    this.pending.delete(p.customId);
    await fsp.rm(this.fileOf(p.customId), { force: true });
  }
}

function isGone(err: unknown): boolean {
  const name = (err as Error | undefined)?.name;
  return name === 'ActivityNotFoundError';
}

/**
 * The requests waiting for a batch answer in a data directory (`runId`: of one run), read from
 * the collector's files by any process on the machine (the status views); unreadable files are
 * left out.
 */
export async function readWaitingRequests(dataDir: string, runId?: string): Promise<WaitingRequest[]> {
  const dir = path.resolve(dataDir, 'llm-pending');
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return [];
  }
  const out: WaitingRequest[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || !PENDING_ID.test(name.slice(0, -5))) continue;
    try {
      const p = PendingRequestSchema.parse(JSON.parse(await fsp.readFile(path.join(dir, name), 'utf8')));
      if (runId !== undefined && p.runId !== runId) continue;
      out.push({ customId: p.customId, step: p.step, functionId: p.functionId, enqueuedAt: p.enqueuedAt, ...(p.runId ? { runId: p.runId } : {}), ...(p.batchId ? { batchId: p.batchId } : {}) });
    } catch {
      // Removed meanwhile (answered), or not a request file.
    }
  }
  return out.sort((a, b) => a.enqueuedAt.localeCompare(b.enqueuedAt));
}

/** Waiting requests in short: how many, in how many batches, how many not sent yet, and the oldest's age. */
export function summarizeWaiting(requests: WaitingRequest[], now: number): { waiting: number; batches: number; unsent: number; oldestAgeMs: number | null } {
  const batches = new Set(requests.flatMap((r) => (r.batchId ? [r.batchId] : [])));
  return {
    waiting: requests.length,
    batches: batches.size,
    unsent: requests.filter((r) => !r.batchId).length,
    oldestAgeMs: requests.length > 0 ? Math.max(0, now - Date.parse(requests[0]!.enqueuedAt)) : null,
  };
}
