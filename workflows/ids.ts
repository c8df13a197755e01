/**
 * Workflow ids, search-attribute values and UI texts made from outside data (repository names and
 * paths, qualified names, a dataset line's `repo_name` and `function_id`). Temporal refuses an id
 * over 1,000 bytes, a search-attribute value over 2 KB and a summary over 400 bytes, and a refused
 * command fails the workflow task, which is retried forever; so every such string is bounded here,
 * far below those limits, and whatever is cut is replaced by a hash of the whole value.
 *
 * Pure and deterministic (no I/O, no clock, no Node modules): usable inside workflows, so a re-run
 * or a replay computes the same id. A function's workflow id reads
 * `<run>/fn/<repository>/<qualified name>/<function id>`, so the Temporal UI and CLI show what it
 * is; the function id (or, for one that is long or holds other characters, a hash of it) keeps it
 * unique within the run.
 */

/** Bound of a workflow id (Temporal: 1,000 bytes). */
export const MAX_WORKFLOW_ID_BYTES = 512;
/** Bound of a keyword search-attribute value (Temporal: 2 KB). */
export const MAX_KEYWORD_BYTES = 512;
/** Bound of a workflow's static summary (Temporal: 400 bytes). */
export const MAX_SUMMARY_BYTES = 300;
/** Bound of a workflow's current details (Temporal: 20,000 bytes). */
export const MAX_DETAILS_BYTES = 4000;

/** Readable parts of a function's workflow id. */
const REPO_PART_BYTES = 80;
const NAME_PART_BYTES = 120;
/** A run id is validated where it enters (at most 128 characters); the id builder bounds it again. */
const RUN_PART_BYTES = 128;

/** Marks a cut string; a hash of the whole follows where uniqueness matters. */
const ELLIPSIS = '…';

/** Bytes of a string in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

/** The longest prefix of whole code points that fits in `maxBytes` of UTF-8. */
export function clipUtf8(s: string, maxBytes: number): string {
  let n = 0;
  let end = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n + w > maxBytes) break;
    n += w;
    end += ch.length;
  }
  return s.slice(0, end);
}

/**
 * 64-bit FNV-1a of the string's UTF-8 bytes, as 16 hex digits. Not a cryptographic hash: it only
 * tells apart values whose readable part was cut, within one run.
 */
export function shortHash(s: string): string {
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  let h = 0xcbf29ce484222325n;
  const bytes: number[] = [];
  for (const ch of s) {
    let c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) bytes.push(c);
    else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  for (const b of bytes) h = ((h ^ BigInt(b)) * prime) & mask;
  return h.toString(16).padStart(16, '0');
}

/** Control, format, unassigned and private-use characters, lone surrogates, and white space. */
const UNPRINTABLE = /[\p{C}\s]/gu;
/** Characters a keyword value never holds as they are (a space is fine in a keyword). */
const CONTROL = /\p{C}/u;
const CONTROLS = /\p{C}/gu;

/** A readable part: unprintable characters become `_`, and it is cut (marked `…`) to `maxBytes`. */
export function readablePart(s: string, maxBytes: number): string {
  const clean = s.replace(UNPRINTABLE, '_') || '_';
  if (utf8Length(clean) <= maxBytes) return clean;
  return clipUtf8(clean, maxBytes - utf8Length(ELLIPSIS)) + ELLIPSIS;
}

/**
 * A keyword search-attribute value: the value itself when it is printable and short (so an exact
 * filter such as `RepostRepo = "acme/tools"` finds it), else its readable head and a hash of the
 * whole (`<head>…~<hash>`), within `MAX_KEYWORD_BYTES`.
 */
export function boundedKeyword(value: string, maxBytes = MAX_KEYWORD_BYTES): string {
  if (!CONTROL.test(value) && utf8Length(value) <= maxBytes) return value;
  const tail = `${ELLIPSIS}~${shortHash(value)}`;
  return clipUtf8(value.replace(CONTROLS, '_'), maxBytes - utf8Length(tail)) + tail;
}

/** A text the UI shows (a summary, current details): unprintable characters other than line breaks kept out, cut to `maxBytes`. */
export function boundedText(text: string, maxBytes: number): string {
  const clean = text.replace(CONTROLS, (ch) => (ch === '\n' ? ch : ' '));
  if (utf8Length(clean) <= maxBytes) return clean;
  return clipUtf8(clean, maxBytes - utf8Length(ELLIPSIS)) + ELLIPSIS;
}

/** Function ids the factory makes (16 hex digits) and other short, plain ones stand for themselves. */
const PLAIN_ID = /^[A-Za-z0-9._-]{1,40}$/;

/**
 * The part of an id that makes it unique: the function id itself when it is short and plain, else
 * `~` and its hash (`~` never occurs in a plain id, so the two forms never meet).
 */
export function uniquePart(functionId: string): string {
  return PLAIN_ID.test(functionId) ? functionId : `~${shortHash(functionId)}`;
}

/** `<prefix>/<repository>/<qualified name>/<unique part>`, every part bounded. */
function readableId(prefix: string, repo: string, qualname: string, functionId: string): string {
  const head = `${clipUtf8(prefix, RUN_PART_BYTES + 16)}/`;
  const tail = `/${uniquePart(functionId)}`;
  const id = `${head}${readablePart(repo, REPO_PART_BYTES)}/${readablePart(qualname, NAME_PART_BYTES)}${tail}`;
  if (utf8Length(id) <= MAX_WORKFLOW_ID_BYTES) return id;
  // Only a prefix past its own bound gets here; the unique part is always kept whole.
  return clipUtf8(id.slice(0, id.length - tail.length), MAX_WORKFLOW_ID_BYTES - utf8Length(tail)) + tail;
}

/** The run id as a part of other ids (validated where it enters; bounded here again). */
function runPart(runId: string): string {
  return readablePart(runId, RUN_PART_BYTES);
}

/** A crawl's function workflow: `<run>/fn/<repository>/<qualified name>/<function id>`. */
export function functionWorkflowId(runId: string, fn: { repoId: string; qualname: string; functionId: string }): string {
  return readableId(`${runPart(runId)}/fn`, fn.repoId, fn.qualname, fn.functionId);
}

/** A crawl's class workflow (a class environment): `<run>/class/<repository>/<class name>/<class id>`. */
export function classWorkflowId(runId: string, cls: { repoId: string; qualname: string; functionId: string }): string {
  return readableId(`${runPart(runId)}/class`, cls.repoId, cls.qualname, cls.functionId);
}

/** An evaluation's function workflow: `<run>/<task>/<repository>/<qualified name>/<function id or its hash>`. */
export function evalFunctionWorkflowId(runId: string, task: string, item: { repo: string; qualname: string; functionId: string }): string {
  return readableId(`${runPart(runId)}/${readablePart(task, 16)}`, item.repo, item.qualname, item.functionId);
}

/** A workflow's static summary in the UI, within Temporal's bound. */
export function boundedSummary(text: string): string {
  return boundedText(text, MAX_SUMMARY_BYTES);
}

/** A workflow's current details in the UI, within Temporal's bound. */
export function boundedDetails(text: string): string {
  return boundedText(text, MAX_DETAILS_BYTES);
}
