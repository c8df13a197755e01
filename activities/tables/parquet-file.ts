/**
 * One split's Parquet file, written with `hyparquet-writer` (pure JavaScript, no native code; its
 * files read back correctly in pyarrow, which the `datasets` library uses). Records are added one
 * at a time and written a row group at a time, so a split is never held in memory whole. The file
 * is written under a temporary name and renamed when complete: a failed export leaves no
 * truncated file where a reader would take it for data.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { columnData, parquetSchema, type TableColumn } from './columns';

/** Rows per row group: small enough to bound memory with long scripts, large enough to compress well. */
export const ROWS_PER_GROUP = 500;

/** The part of hyparquet-writer used here (an ES module; loaded when the first file is opened). */
interface HyparquetWriter {
  fileWriter(filename: string): unknown;
  ParquetWriter: new (options: { writer: unknown; schema: Record<string, unknown>[]; createdBy?: string }) => {
    write(options: { columnData: { name: string; data: unknown[] }[]; rowGroupSize?: number }): void | Promise<void>;
    finish(): void;
  };
}

function loadWriter(): HyparquetWriter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('hyparquet-writer') as HyparquetWriter;
}

/** A Parquet file of records `R` with the given columns. */
export class ParquetSplitFile<R> {
  private readonly tmp: string;
  private readonly writer: InstanceType<HyparquetWriter['ParquetWriter']>;
  private pending: R[] = [];
  private written = 0;

  constructor(
    readonly file: string,
    private readonly columns: readonly TableColumn<R>[],
  ) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const lib = loadWriter();
    this.writer = new lib.ParquetWriter({ writer: lib.fileWriter(this.tmp), schema: parquetSchema(columns), createdBy: 'repost-factory' });
  }

  get rows(): number {
    return this.written + this.pending.length;
  }

  async add(record: R): Promise<void> {
    this.pending.push(record);
    if (this.pending.length >= ROWS_PER_GROUP) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    await this.writer.write({ columnData: columnData(this.pending, this.columns), rowGroupSize: this.pending.length });
    this.written += this.pending.length;
    this.pending = [];
  }

  /** Writes what is left and the footer, then puts the file in place. */
  async close(): Promise<void> {
    await this.flush();
    this.writer.finish();
    fs.renameSync(this.tmp, this.file);
  }

  /** Drops the unfinished file. */
  abort(): void {
    fs.rmSync(this.tmp, { force: true });
  }
}
