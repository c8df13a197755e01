/**
 * What one batch may hold, as the Batch API sets it (and `vllm run-batch` reads the same files):
 * at most 50,000 requests and 200 MB of request file, answered within a 24-hour window. Only chat
 * completions are batched.
 */
export const BATCH_ENDPOINT = '/v1/chat/completions' as const;

export const BATCH_COMPLETION_WINDOW = '24h' as const;

export const BATCH_LIMITS = {
  /** Request lines in one batch. */
  maxRequests: 50_000,
  /** Bytes of one batch's request file (MB as the Batch API counts it: 200 × 1024 × 1024). */
  maxRequestBytes: 200 * 1024 * 1024,
  /**
   * Bytes of one result file the factory reads (answers are longer than questions: 50,000
   * answers of a few thousand tokens each). A larger file is refused before it is read.
   */
  maxResultBytes: 1024 * 1024 * 1024,
} as const;
