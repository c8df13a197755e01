/**
 * File names of ids from outside (function ids, repository ids): different for different ids,
 * and never a path of their own (no separator, never `.` or `..`), whatever characters and
 * length the id has.
 */
import { createHash } from 'node:crypto';

/** Ids that are file names as they are: the factory's function ids (16 hex digits) and other short, plain ones. */
const PLAIN_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,119}$/;

/**
 * The file name of an id, different for different ids: a plain id stands for itself; any other
 * (separators, other characters, a leading dot, over 120 characters) becomes its readable head,
 * `~` and 32 hex digits of its SHA-256. A plain name never holds `~`, so the two never meet.
 */
export function safeName(id: string): string {
  if (PLAIN_NAME.test(id)) return id;
  return `${id.slice(0, 60).replace(/[^A-Za-z0-9._-]/g, '_')}~${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32)}`;
}
