/**
 * The names a batch and its requests go by. Each is bounded and made of a few safe characters,
 * so one can be a folder name, a file id in a URL or a line's `custom_id` without escaping, and
 * one read back from a file or a server is checked before it is used.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** A batch's own id: its folder name under `<dataDir>/llm-batches/`. */
export const BatchIdSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a batch id is 1 to 64 lowercase letters, digits or "-", starting with a letter or a digit');
export type BatchId = z.infer<typeof BatchIdSchema>;

/** A request's `custom_id`: what matches an answer line to the request that asked it. */
export const CustomIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a custom_id is 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or a digit');
export type CustomId = z.infer<typeof CustomIdSchema>;

/** An id the Batch API service gave (a batch, a file). */
export const RemoteIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, 'a service id is 1 to 128 letters, digits, "_" or "-"');

/** The id of a batch made at `now`: its UTC time, readable and sortable, then 8 random hex digits. */
export function newBatchId(now: Date, random: () => string = () => randomBytes(4).toString('hex')): BatchId {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15).toLowerCase();
  return BatchIdSchema.parse(`b-${stamp}-${random()}`);
}

/** A readable problem with `value` as a batch id, or null when it is one. */
export function batchIdProblem(value: string): string | null {
  const r = BatchIdSchema.safeParse(value);
  return r.success ? null : `not a batch id: ${JSON.stringify(value.slice(0, 80))} (${r.error.issues[0]?.message ?? 'invalid'})`;
}
