/**
 * Write the configuration reference, docs/config-reference.md, from the configuration schema.
 *
 *   tsx scripts/config-reference.ts          write the page
 *   tsx scripts/config-reference.ts --check  exit 1 when the page differs from what the schema gives
 *
 * Every key must have a description (a doc comment on the key in the schema); a key without one
 * is an error naming it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommandFailure, runCommand } from './lib/cli';
import { REFERENCE_PAGE, renderConfigReference } from './lib/config-reference';

runCommand({
  file: __filename,
  options: { check: { type: 'boolean' } },
  run: ({ values }) => {
    const { text, problems } = renderConfigReference();
    if (problems.undescribed.length) throw new CommandFailure(`keys without a description (add a doc comment on the key in the schema): ${problems.undescribed.join(', ')}`);
    const page = path.relative(process.cwd(), REFERENCE_PAGE);
    if (values.check) {
      const current = fs.existsSync(REFERENCE_PAGE) ? fs.readFileSync(REFERENCE_PAGE, 'utf8') : '';
      if (current !== text) throw new CommandFailure(`${page} differs from the schema; write it again with: npx tsx scripts/config-reference.ts`);
      console.log(`${page} matches the schema`);
      return;
    }
    fs.writeFileSync(REFERENCE_PAGE, text);
    console.log(`wrote ${page}`);
  },
});
