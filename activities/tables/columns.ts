/**
 * Tables of records as columns: each column's name, type, meaning and value, from which a Parquet
 * schema, column data and the Hugging Face `features` of a dataset card are derived, so they
 * cannot disagree. Shared by the dataset export (activities/export) and the class corpus
 * (activities/classes); it knows nothing of either.
 */
export type Scalar = 'string' | 'float64' | 'bool' | 'int32' | 'int64';

/**
 * A struct list's fields are strings unless `types` says otherwise; a `nullable` list may be null
 * (not known for a record), which is not the same as empty.
 */
export type ColumnType = { kind: 'scalar'; scalar: Scalar; nullable: boolean } | { kind: 'struct-list'; fields: readonly string[]; types?: Readonly<Record<string, Scalar>>; nullable?: boolean };

/** One column of a table of records `R`: its name, type, meaning and how a record gives its value. */
export interface TableColumn<R> {
  name: string;
  type: ColumnType;
  description: string;
  value(record: R): unknown;
}

/** Parquet schema elements (the flat, depth-first form Parquet uses) of the columns. */
export function parquetSchema(columns: readonly TableColumn<never>[]): Record<string, unknown>[] {
  const physical: Record<Scalar, Record<string, unknown>> = {
    string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
    float64: { type: 'DOUBLE' },
    bool: { type: 'BOOLEAN' },
    int32: { type: 'INT32' },
    int64: { type: 'INT64' },
  };
  const out: Record<string, unknown>[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) {
    if (c.type.kind === 'scalar') {
      out.push({ name: c.name, ...physical[c.type.scalar], repetition_type: c.type.nullable ? 'OPTIONAL' : 'REQUIRED' });
    } else {
      // The standard three-level list: <name> (LIST) -> repeated group list -> element (struct).
      out.push({ name: c.name, repetition_type: c.type.nullable ? 'OPTIONAL' : 'REQUIRED', converted_type: 'LIST', num_children: 1 });
      out.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
      out.push({ name: 'element', repetition_type: 'REQUIRED', num_children: c.type.fields.length });
      for (const f of c.type.fields) out.push({ name: f, ...physical[c.type.types?.[f] ?? 'string'], repetition_type: 'REQUIRED' });
    }
  }
  return out;
}

/** Column-major data of some records, typed as Parquet wants it (64-bit integers as bigint). */
export function columnData<R>(records: readonly R[], columns: readonly TableColumn<R>[]): { name: string; data: unknown[] }[] {
  return columns.map((c) => {
    const convert = c.type.kind === 'scalar' && c.type.scalar === 'int64' ? (v: unknown) => BigInt(Math.round(v as number)) : (v: unknown) => v;
    return { name: c.name, data: records.map((r) => convert(c.value(r))) };
  });
}

/** The columns as `datasets` spells features in a dataset card's YAML. */
export function huggingFaceFeatures(columns: readonly TableColumn<never>[]): Record<string, unknown>[] {
  return columns.map((c) =>
    c.type.kind === 'scalar'
      ? { name: c.name, dtype: c.type.scalar }
      : { name: c.name, list: c.type.fields.map((f) => ({ name: f, dtype: (c.type.kind === 'struct-list' && c.type.types?.[f]) || 'string' })) },
  );
}
