#!/usr/bin/env node
/**
 * The `repost` command: `repost <command> [options]` runs `scripts/<command>.ts` (the same script
 * `npx tsx scripts/<command>.ts` runs, with the same options, help and exit codes).
 *
 *   repost start --local ~/src/repo     repost status RUN     repost <command> --help
 *
 * Commands: the files in scripts/ (start, status, replay, report, export, eval, rft, classes,
 * analyze, sandbox, schedule, batches, ui, bench, config-reference, dataset-reference).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SCRIPTS = path.join(__dirname, '..', 'scripts');
const commands = fs.readdirSync(SCRIPTS).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
const [command, ...rest] = process.argv.slice(2);

if (command === undefined || command === '--help' || command === '-h') {
  process.stdout.write(`usage: repost <command> [options]   (repost <command> --help for its options)\ncommands: ${commands.join(', ')}\n`);
  process.exit(command === undefined ? 2 : 0);
}
require('tsx/cjs');
if (!commands.includes(command)) {
  const { unknownNameMessage } = require('../activities/nearest-name.ts');
  process.stderr.write(`repost: ${unknownNameMessage('command', command, commands)}\n`);
  process.exit(2);
}
// The script reads its options from process.argv.slice(2), as when tsx runs it.
process.argv = [process.argv[0], path.join(SCRIPTS, `${command}.ts`), ...rest];
require(path.join(SCRIPTS, `${command}.ts`));
