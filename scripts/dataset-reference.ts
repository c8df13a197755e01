/**
 * Write the exported columns' tables into docs/dataset.md (between their markers) from the
 * export's column tables; the record field tables beside them are written by hand and checked by
 * test/unit/dataset/dataset-page.test.ts.
 *
 *   tsx scripts/dataset-reference.ts          write the tables
 *   tsx scripts/dataset-reference.ts --check  exit 1 when the page's tables differ from the columns
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommandFailure, runCommand } from './lib/cli';
import { DATASET_PAGE, withColumnTables } from './lib/dataset-reference';

runCommand({
  file: __filename,
  options: { check: { type: 'boolean' } },
  run: ({ values }) => {
    const current = fs.readFileSync(DATASET_PAGE, 'utf8');
    const text = withColumnTables(current);
    const page = path.relative(process.cwd(), DATASET_PAGE);
    if (values.check) {
      if (current !== text) throw new CommandFailure(`${page}: the column tables differ from the export's columns; write them again with: npx tsx scripts/dataset-reference.ts`);
      console.log(`${page} matches the export's columns`);
      return;
    }
    fs.writeFileSync(DATASET_PAGE, text);
    console.log(`wrote the column tables of ${page}`);
  },
});
