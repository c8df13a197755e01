/**
 * Reading a Parquet file back as rows (objects by column name), with `hyparquet`, the reader
 * half of the pure-JavaScript pair whose writer (`hyparquet-writer`) makes the exported files.
 * Used where a command takes the project's own export as input (`eval.ts --dataset DIR|FILE.parquet`).
 * A file that is no Parquet file is an error naming it.
 */

/** The part of hyparquet used here (an ES module, loaded on first use like the writer). */
interface Hyparquet {
  asyncBufferFromFile(filename: string): Promise<unknown>;
  parquetReadObjects(options: { file: unknown; rowFormat?: 'object' }): Promise<Record<string, unknown>[]>;
}

function loadReader(): Hyparquet {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('hyparquet') as Hyparquet;
}

export class ParquetReadError extends Error {
  override name = 'ParquetReadError';
}

/** Every row of the file, in order; BigInt values (64-bit integers) as numbers when they fit. */
export async function readParquetRows(file: string): Promise<Record<string, unknown>[]> {
  const { asyncBufferFromFile, parquetReadObjects } = loadReader();
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: await asyncBufferFromFile(file) });
  } catch (err) {
    throw new ParquetReadError(`${file}: not a readable Parquet file (${(err as Error).message})`);
  }
  return rows.map((row) => plain(row) as Record<string, unknown>);
}

function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !(value instanceof Date)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}
