/**
 * The tables of docs/dataset.md that follow from code: the type of every field of a function and
 * of a class record (from the record schemas in activities/store/records.ts), and the exported
 * Parquet columns (name, type, meaning, from the export's own column tables). The fields'
 * meanings are written by hand on the page; these say what the page's type cells must read and
 * write the column tables between their markers.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { CLASS_ENVIRONMENT_COLUMNS } from '../../activities/export/class-columns';
import { EXPORT_COLUMNS, type ColumnType, type ExportColumn } from '../../activities/export/columns';
import { ClassDatasetRecordSchema, DatasetRecordSchema } from '../../activities/store/records';

export const DATASET_PAGE = path.resolve(__dirname, '../../docs/dataset.md');

interface JsonNode {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonNode[];
  items?: JsonNode;
  properties?: Record<string, JsonNode>;
  additionalProperties?: JsonNode | boolean;
  required?: string[];
}

/** A JSON Schema node as the page writes a type: `string`, `number or null`, `list of string`, `train \| eval`. */
function typeText(node: JsonNode): string {
  const variants = node.anyOf ?? [node];
  const nullable = variants.some((v) => v.type === 'null' || (Array.isArray(v.type) && v.type.includes('null')));
  const [main] = variants.filter((v) => v.type !== 'null');
  if (!main) return 'null';
  let text: string;
  const base = [main.type].flat().find((t) => t !== 'null');
  if (main.enum) text = main.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  else if (base === 'array') text = `list of ${main.items?.type === 'object' ? `{${Object.keys(main.items.properties ?? {}).join(', ')}}` : typeText(main.items ?? {})}`;
  else if (base === 'object' && main.properties) text = `{${Object.keys(main.properties).join(', ')}}`;
  else if (base === 'object') text = `map of ${typeof main.additionalProperties === 'object' ? typeText(main.additionalProperties) : 'any'}`;
  else text = base ?? 'any';
  return nullable ? `${text} or null` : text;
}

/** Every field of a record schema, in the schema's order, with its type as the page writes it (`, optional` when a record may lack it). */
export function recordFieldTypes(schema: z.ZodType): { name: string; type: string }[] {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonNode;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, node]) => ({ name, type: typeText(node) + (required.has(name) ? '' : ', optional') }));
}

export const RECORD_SCHEMAS = { function: DatasetRecordSchema, class: ClassDatasetRecordSchema } as const;

/** The rows of a field table on the page (`| `name` | type | meaning |`), under the heading that starts with `heading`. */
export function pageFieldRows(page: string, heading: string): { name: string; type: string; meaning: string }[] {
  const start = page.split('\n').findIndex((l) => l.startsWith(heading));
  if (start < 0) return [];
  const rows: { name: string; type: string; meaning: string }[] = [];
  const lines = page.split('\n').slice(start + 1);
  for (const line of lines) {
    if (/^#/.test(line)) break;
    const m = /^\| `([^`]+)` \| (.*?) \| (.*) \|$/.exec(line);
    if (m) rows.push({ name: m[1]!, type: m[2]!, meaning: m[3]! });
  }
  return rows;
}

function columnTypeText(type: ColumnType): string {
  if (type.kind === 'scalar') return type.nullable ? `${type.scalar} or null` : type.scalar;
  const list = `list of {${type.fields.map((f) => `${f}: ${type.types?.[f] ?? 'string'}`).join(', ')}}`;
  return type.nullable ? `${list} or null` : list;
}

/** A Markdown table of exported columns. */
export function columnTable(columns: readonly ExportColumn<never>[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return ['| column | Parquet type | meaning |', '|---|---|---|', ...columns.map((c) => `| \`${c.name}\` | ${cell(columnTypeText(c.type))} | ${cell(c.description)} |`)].join('\n');
}

export const COLUMN_TABLES = {
  functions: EXPORT_COLUMNS as readonly ExportColumn<never>[],
  classes: CLASS_ENVIRONMENT_COLUMNS as readonly ExportColumn<never>[],
} as const;

const marker = (name: string, end: boolean) => `<!-- ${end ? 'end of ' : ''}generated: ${name} columns (npx tsx scripts/dataset-reference.ts) -->`;

/** The page with every generated column table written again between its markers; a missing marker is an error naming it. */
export function withColumnTables(page: string): string {
  let out = page;
  for (const [name, columns] of Object.entries(COLUMN_TABLES)) {
    const open = marker(name, false);
    const close = marker(name, true);
    const from = out.indexOf(open);
    const to = out.indexOf(close);
    if (from < 0 || to < from) throw new Error(`docs/dataset.md has no ${open} ... ${close} block`);
    out = `${out.slice(0, from + open.length)}\n${columnTable(columns)}\n${out.slice(to)}`;
  }
  return out;
}
