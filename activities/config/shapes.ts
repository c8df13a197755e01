/** The value shapes the configuration's sections share, and the mark of a key that belongs to the process. */
import { z } from 'zod';

export const positiveInt = z.number().int().positive();
export const nonNegativeInt = z.number().int().nonnegative();
export const fraction = z.number().min(0).max(1);
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as YYYY-MM-DD');

/** Schema metadata of a key (or a whole section) that belongs to the process, never to a run. */
export const PER_PROCESS = { perProcess: true } as const;
