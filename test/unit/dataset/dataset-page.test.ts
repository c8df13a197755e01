/**
 * docs/dataset.md documents every field of a function record and of a class record (one row each:
 * name, type, meaning) and every exported column: this fails when the page and the record schemas
 * (activities/store/records.ts) or the export's columns disagree.
 */
import * as fs from 'node:fs';
import { COLUMN_TABLES, DATASET_PAGE, pageFieldRows, RECORD_SCHEMAS, recordFieldTypes, withColumnTables } from '../../../scripts/lib/dataset-reference';

const page = fs.readFileSync(DATASET_PAGE, 'utf8');
const HEADINGS = { function: '## A function record', class: '## A class record' } as const;

describe('docs/dataset.md', () => {
  for (const kind of ['function', 'class'] as const) {
    describe(`the ${kind} record's table`, () => {
      const rows = pageFieldRows(page, HEADINGS[kind]);
      const fields = recordFieldTypes(RECORD_SCHEMAS[kind]);

      it('has one row per field of the schema, in its order, and none the schema lacks', () => {
        expect(rows.map((r) => r.name)).toEqual(fields.map((f) => f.name));
      });

      it("gives each field the schema's type", () => {
        const types = new Map(fields.map((f) => [f.name, f.type]));
        for (const row of rows) expect({ field: row.name, type: row.type }).toEqual({ field: row.name, type: types.get(row.name) });
      });

      it('says what each field means', () => {
        for (const row of rows) expect({ field: row.name, meaning: row.meaning.trim().length > 10 }).toEqual({ field: row.name, meaning: true });
      });
    });
  }

  it('has the exported columns as the export writes them (write them again with: npx tsx scripts/dataset-reference.ts)', () => {
    expect(page).toBe(withColumnTables(page));
    for (const columns of Object.values(COLUMN_TABLES)) for (const c of columns) expect(page).toContain(`| \`${c.name}\` |`);
  });

  it('names the function record fields that are not Parquet columns, and only those', () => {
    const columns = new Set(COLUMN_TABLES.functions.map((c) => c.name));
    const notColumns = recordFieldTypes(RECORD_SCHEMAS.function).map((f) => f.name).filter((name) => !columns.has(name));
    expect(notColumns.sort()).toEqual(['mutants', 'mutation_min_score', 'solvability', 'split', 'stability_reason']);
    const paragraph = page.slice(page.indexOf('- `data/<split>-00000-of-00001.parquet`'), page.indexOf('<!-- generated: functions columns'));
    for (const name of notColumns) expect({ name, named: paragraph.includes(`\`${name}\``) || (name === 'split' && paragraph.includes('the split is the file')) }).toEqual({ name, named: true });
  });
});
