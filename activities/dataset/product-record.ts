/**
 * An accepted record as the dataset's readers (statistics, report, export) see it: the
 * `dataset.jsonl` line plus the fields that say where it belongs (its split, the thresholds that
 * applied to it, the source repository's license). Records written before those fields existed
 * read as the training split with an unknown license, which is what such runs built.
 */
import { z } from 'zod';
import { DatasetRecordSchema } from '../store/records';

export const SPLITS = ['train', 'eval'] as const;
export type DatasetSplit = (typeof SPLITS)[number];

/** Written on every record by the crawl; optional here so older run folders stay readable. */
export const ProductFieldsSchema = z.object({
  split: z.enum(SPLITS).default('train'),
  /** Branch coverage the record had to reach (RepoST: 0.8 for train, 1.0 for eval). */
  coverage_threshold: z.number().nullable().optional(),
  /** Whether equal ASTs were required (RepoST's evaluation set) or the LLM check could admit it. */
  ast_check_required: z.boolean().nullable().optional(),
  /** SPDX-like license key of the source repository (GitHub's `license.key`), when known. */
  license: z.string().nullable().optional(),
  /** Where the license came from: `github-api`, `file:<name>`, `none`. */
  license_source: z.string().nullable().optional(),
});

export const ProductRecordSchema = DatasetRecordSchema.extend(ProductFieldsSchema.shape);
export type ProductRecord = z.infer<typeof ProductRecordSchema>;

export const UNKNOWN_LICENSE = 'unknown';

/** The record's license key, lower case, or 'unknown'. */
export function licenseOf(record: Pick<ProductRecord, 'license'>): string {
  return record.license?.trim().toLowerCase() || UNKNOWN_LICENSE;
}
