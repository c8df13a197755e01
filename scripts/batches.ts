/**
 * The LLM batches of this machine's data directory (`<dataDir>/llm-batches/`): what waits,
 * where its files are, and loading answers produced elsewhere.
 *
 *   tsx scripts/batches.ts list [--all] [--json]   batches still waiting (--all: ended ones too), with
 *                                                   their backend, age, request count and folder
 *   tsx scripts/batches.ts show ID [--json]        one batch: its files (size, lines), the service's ids
 *                                                   and last status, how it ended, what was imported
 *   tsx scripts/batches.ts import FILE [--batch ID] [--partial]
 *                                                   loads a results file in the Batch API's output format
 *                                                   (e.g. from `vllm run-batch -i requests.jsonl -o FILE`)
 *                                                   into the waiting file-exchange batch that asked it
 *
 * `import` checks every line of FILE (the format, and every custom_id one of the batch's requests,
 * none twice) before anything is written, and never replaces results a batch already has. The
 * batch is the one `--batch` names, or the one waiting batch that asked every custom_id of FILE.
 * A file answering only some requests is refused unless `--partial`: then the others end without
 * an answer and are asked again. Reading a batch asks no service anything.
 */
import {
  BatchFileError,
  BatchFolders,
  BatchImportError,
  BatchNotFoundError,
  importBatchResults,
  readBatchRequests,
  summarizeBatchFiles,
  type BatchManifest,
} from '../activities/llm/batch';
import { loadConfig } from '../temporal.config';
import * as fs from 'node:fs';
import { CommandFailure, UsageError, runCommand } from './lib/cli';
import { formatDuration } from './lib/status';

const COMMANDS = ['list', 'show', 'import'] as const;

/** Text from outside (a service's message, a file's line quoted in an error) with its control characters shown, not sent to the terminal. */
const printable = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function stateOf(m: BatchManifest): string {
  if (m.state === 'ended') return `ended ${m.endStatus ?? ''}`.trim();
  if (m.remote) return `waiting (${m.remote.status})`;
  if (m.imported) return 'waiting (results imported)';
  return m.backend === 'files' ? 'waiting for results' : 'waiting to be handed over';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

async function list(folders: BatchFolders, all: boolean, json: boolean, now: number): Promise<number> {
  const { batches, problems } = await folders.list();
  const shown = batches.filter((b) => all || b.state === 'waiting');
  if (json) {
    console.log(JSON.stringify({ root: folders.root, batches: shown.map((b) => ({ ...b, folder: folders.folderOf(b.id), ageMs: now - Date.parse(b.createdAt) })), problems }, null, 2));
    return 0;
  }
  const waiting = batches.filter((b) => b.state === 'waiting').length;
  const ended = batches.length - waiting;
  console.log(`${waiting} batch(es) waiting in ${folders.root}${ended ? `, ${ended} ended${all ? '' : ' (--all shows them)'}` : ''}`);
  if (shown.length) {
    const rows = [['id', 'backend', 'state', 'age', 'requests', 'folder']];
    for (const b of shown) rows.push([b.id, b.backend, stateOf(b), formatDuration(now - Date.parse(b.createdAt)), String(b.requests), folders.folderOf(b.id)]);
    console.log(table(rows));
  }
  for (const p of problems) console.error(`not a batch: ${printable(p.name)}: ${printable(p.problem)}`);
  return 0;
}

async function show(folders: BatchFolders, id: string, json: boolean, now: number): Promise<number> {
  const m = await folders.readManifest(id);
  const files = await summarizeBatchFiles(folders, id);
  const requests = await readBatchRequests(folders, id);
  const models: Record<string, number> = {};
  for (const model of requests.modelOf.values()) models[model] = (models[model] ?? 0) + 1;
  if (json) {
    console.log(JSON.stringify({ manifest: m, folder: folders.folderOf(id), ageMs: now - Date.parse(m.createdAt), files, models }, null, 2));
    return 0;
  }
  const lines = [
    `batch ${m.id} (${m.backend} backend): ${stateOf(m)}`,
    `  folder    ${folders.folderOf(id)}`,
    `  made      ${m.createdAt} (${formatDuration(now - Date.parse(m.createdAt))} ago)`,
    `  asks      ${m.requests} request(s) (${m.bytes} bytes); models: ${Object.entries(models)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  ];
  for (const f of files.filter((f) => f.name !== 'manifest')) lines.push(`  ${f.name.padEnd(9)} ${f.bytes === null ? `${f.path} (not there)` : `${f.path}: ${f.lines} line(s), ${f.bytes} bytes`}`);
  if (m.remote) lines.push(`  service   batch ${m.remote.batchId}, input file ${m.remote.inputFileId}, last seen ${m.remote.status} at ${m.remote.checkedAt}`);
  if (m.imported) lines.push(`  imported  ${m.imported.answered} answer(s) from ${printable(m.imported.source)} at ${m.imported.at}${m.imported.partial ? ' (partial: the other requests end without an answer)' : ''}`);
  if (m.endedAt) lines.push(`  ended     ${m.endStatus} at ${m.endedAt}`);
  if (m.failure) lines.push(`  failure   ${printable(m.failure)}`);
  if (m.state === 'waiting' && m.backend === 'files' && !m.imported) {
    lines.push(`  answer it elsewhere, e.g. vllm run-batch -i ${folders.pathOf(id, 'requests')} -o ${folders.pathOf(id, 'results')} --model MODEL`);
    lines.push(`  or load a results file with: tsx scripts/batches.ts import FILE --batch ${id}`);
  }
  console.log(lines.join('\n'));
  return 0;
}

type Flags = { all?: boolean; json?: boolean; batch?: string; partial?: boolean };

async function main(values: Flags, positionals: string[]): Promise<number> {
  const [command, ...args] = positionals;
  if (!command || !(COMMANDS as readonly string[]).includes(command)) throw new UsageError(command ? `unknown command ${command}` : `give a command: ${COMMANDS.join(', ')}`);
  const expected = command === 'list' ? 0 : 1;
  if (args.length !== expected) throw new UsageError(`${command} takes ${expected === 0 ? 'no argument' : command === 'show' ? 'one batch id' : 'one results file'}`);
  if (command !== 'import' && (values.batch !== undefined || values.partial)) throw new UsageError('--batch and --partial are for import');
  if (command !== 'list' && values.all) throw new UsageError('--all is for list');
  const folders = new BatchFolders(loadConfig().dataDir);
  const now = Date.now();
  try {
    if (command === 'list') return await list(folders, values.all ?? false, values.json ?? false, now);
    if (command === 'show') return await show(folders, args[0]!, values.json ?? false, now);
    const done = await importBatchResults(folders, args[0]!, { batchId: values.batch, partial: values.partial ?? false, now: new Date(now) });
    console.log(`loaded ${done.answered} answer(s) of batch ${done.batchId}'s ${done.requests} request(s) into ${done.file}`);
    if (done.partial) console.log(`partial: the other ${done.requests - done.answered} request(s) end without an answer and are asked again`);
    return 0;
  } catch (err) {
    // A batch that is not there is a mistake in the command line: nothing was done.
    if (err instanceof BatchNotFoundError) throw new UsageError(err.message);
    // A results file that is not there is a mistake in the command line too; one that cannot be
    // loaded is a failure, in the common `batches: <message>` form.
    if (err instanceof BatchImportError && !fs.existsSync(args[0]!)) throw new UsageError(`no such results file: ${printable(args[0]!)}`);
    if (err instanceof BatchImportError || err instanceof BatchFileError) throw new CommandFailure(printable(err.message));
    throw err;
  }
}

runCommand({
  file: __filename,
  options: { all: { type: 'boolean' }, json: { type: 'boolean' }, batch: { type: 'string' }, partial: { type: 'boolean' } },
  positionals: { min: 0, max: 2 },
  run: ({ values, positionals }) => main(values, positionals),
});
