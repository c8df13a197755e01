/**
 * Batch LLM mode's parts that know nothing of Temporal: the Batch API's file formats, what an
 * answer line means, when to flush.
 */
export { BATCH_ENDPOINT, BATCH_COMPLETION_WINDOW, BATCH_LIMITS } from './limits';
export { BatchIdSchema, CustomIdSchema, RemoteIdSchema, newBatchId, batchIdProblem, type BatchId, type CustomId } from './ids';
export {
  batchRequestLine,
  BatchRequestLineSchema,
  BatchOutputLineSchema,
  BatchFileError,
  jsonlText,
  lineBytes,
  readJsonl,
  type BatchRequestLine,
  type BatchOutputLine,
} from './lines';
export { outcomeOfLine, unansweredOutcome, type BatchRequestOutcome } from './outcome';
export { FlushPolicySchema, BatchAccumulator, RequestTooLargeError, admit, flushDue, flushDueAt, type FlushPolicy, type FlushReason, type OpenBatch, type Flushed } from './flush-policy';
