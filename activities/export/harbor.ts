/**
 * A run's accepted function records as a Harbor dataset folder: one task folder per record, each
 * with `task.toml` (Harbor's task schema 1.4), `instruction.md` (the evaluation's solve prompt and
 * where the answer goes), `environment/Dockerfile` (the sandbox image with the record's pinned
 * packages installed at build time, so verification needs no network), `tests/` (test.sh, the
 * verifier and the record's evaluation script with the slot where the answer goes), and
 * `solution/solve.sh` (writes the ground truth). The verifier runs in its own container
 * (`environment_mode = "separate"`): the agent never sees the tests, and only its answer file
 * crosses over. A `dataset.toml` names the dataset.
 *
 * Every name and path comes from this module, never from the record: a task's folder name is a
 * bounded slug of the target's name plus the record's id hash; the record's text goes only into
 * file contents (JSON-encoded for the verifier, a quoted heredoc for solve.sh).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { EvalDatasetLineSchema, toEvalRecord, type EvalRecord } from '../eval/dataset';
import { promptContext, hasDocstring } from '../eval/prompt-context';
import { renderPrompt } from '../llm';
import { dedentLike, isolatedPlacement, withNewImplementation } from '../sandbox/new-implementation';
import type { RunReader } from '../dataset/run-reader';
import { writeFileAtomic } from '../store/artifacts';

export const HARBOR_SCHEMA_VERSION = '1.4';
/** Where the agent writes its answer, in its container; Harbor carries it to the verifier's. */
export const ANSWER_PATH = '/app/solution.py';
const SLOT = '#@@REPOST_ANSWER_SLOT@@';
const VERIFIER_SOURCE = path.join(__dirname, 'harbor-verifier.py');
const MARKER = '.repost-harbor-export.json';
const MARKER_EXPORTER = 'repost-factory harbor';
/** Longest task folder name: Docker Compose project names and Harbor's names stay well within it. */
const MAX_TASK_NAME = 63;

export class HarborExportError extends Error {
  override name = 'HarborExportError';
}

export interface HarborSandboxSettings {
  /** The image every task's environment starts FROM (the project's sandbox image). */
  image: string;
  memoryMb: number;
  cpus: number;
  /** One verification's time limit (the run's sandbox timeout). */
  timeoutSec: number;
}

export interface HarborTaskFiles {
  name: string;
  files: Record<string, { text: string; mode?: number }>;
}

/** A bounded, safe task name: [a-z0-9-], starting with a letter, ending with the record's hash. */
export function harborTaskName(record: Pick<EvalRecord, 'qualname' | 'functionId'>): string {
  const hash = createHash('sha256').update(record.functionId).digest('hex').slice(0, 12);
  const slug = record.qualname
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_TASK_NAME - hash.length - 3)
    .replace(/-+$/, '');
  return `t-${slug ? `${slug}-` : ''}${hash}`;
}

/** A TOML basic string: quotes, backslashes and control characters escaped. */
export function tomlString(value: string): string {
  return `"${[...value].map((c) => {
    if (c === '"') return '\\"';
    if (c === '\\') return '\\\\';
    const code = c.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) return `\\u${code.toString(16).padStart(4, '0')}`;
    return c;
  }).join('')}"`;
}

/** A requirement `name==version` the Dockerfile may install: PEP 508 names and versions only. */
const REQUIREMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}==[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}$/;

/** The evaluation script with a marked line where the answer's definition goes, and its indentation. */
export function answerSlot(record: Pick<EvalRecord, 'evalScript' | 'qualname'>): { script: string; indent: string; preambleAt: number } {
  const name = record.qualname.split('.').pop()!;
  const marker = `def ${name}(*args, **kwargs):\n    ${SLOT}\n`;
  const placed = withNewImplementation(record.evalScript, marker, record.qualname);
  const lines = placed.split('\n');
  const at = lines.findIndex((l) => l.trim() === SLOT);
  if (at < 1 || !lines[at - 1]!.trimStart().startsWith(`def ${name}_new_implementation(`)) throw new HarborExportError(`cannot mark where ${record.qualname}'s answer goes in its script`);
  const indent = /^\s*/.exec(lines[at - 1]!)![0];
  lines.splice(at - 1, 2, `${indent}${SLOT}`);
  const script = lines.join('\n');
  // The answer's imports go after a module docstring and `from __future__` imports.
  const future = [...script.matchAll(/^from __future__ import [^\n]*\n/gm)].pop();
  const preambleAt = future ? future.index! + future[0].length : 0;
  return { script, indent, preambleAt };
}

/**
 * An isolated run's halves (see isolatedPlacement): the script the trusted process runs (a stub as
 * `<name>_new_implementation`), and the candidate's module with a marked line where the answer's
 * definition goes (under its own name), its indentation and where the answer's imports go.
 */
export function isolatedSlot(record: Pick<EvalRecord, 'evalScript' | 'qualname'>): { script: string; module: string; indent: string; preambleAt: number; target: string; kind: 'function' | 'class' } {
  const name = record.qualname.split('.').pop()!;
  // A body of the marker alone would be no body at all: a `pass` after it keeps the definition whole.
  const placed = isolatedPlacement(record.evalScript, `def ${name}(*args, **kwargs):\n    ${SLOT}\n    pass\n`, record.qualname);
  const lines = placed.module.split('\n');
  const at = lines.findIndex((l) => l.trim() === SLOT);
  if (at < 1 || !lines[at - 1]!.trimStart().startsWith(`def ${name}(`) || lines[at + 1]?.trim() !== 'pass') {
    throw new HarborExportError(`cannot mark where ${record.qualname}'s answer goes in its candidate module`);
  }
  const indent = /^\s*/.exec(lines[at - 1]!)![0];
  lines.splice(at - 1, 3, `${indent}${SLOT}`);
  const module = lines.join('\n');
  const future = [...module.matchAll(/^from __future__ import [^\n]*\n/gm)].pop();
  return { script: placed.script, module, indent, preambleAt: future ? future.index! + future[0].length : 0, target: placed.target, kind: placed.kind };
}

/** The solve prompt eval.ts would send (the original docstring, else the record's generated one). */
export function instructionOf(record: EvalRecord): string {
  const generated = !hasDocstring(record.origFunc) && record.generatedDocstring ? record.generatedDocstring : undefined;
  const context = promptContext(record, generated ? { mode: 'generated', generated } : { mode: 'original' });
  const prompt = renderPrompt('solve', { functionName: record.qualname, context });
  const user = prompt.messages.find((m) => m.role === 'user')!.content;
  return [
    `# Implement \`${record.qualname}\``,
    '',
    user.trim(),
    '',
    '## Where the answer goes',
    '',
    `Write the complete definition of \`${record.name}\` (its signature and body, with any imports it needs at the top of the file) to \`${ANSWER_PATH}\`.`,
    `Only that file is graded: it is placed in a hidden evaluation script that compares your \`${record.name}\` with the original on its tests. Python 3 and the packages the code needs are installed; the grader runs without a network.`,
    '',
  ].join('\n');
}

function testFunctions(script: string): string[] {
  return [...script.matchAll(/^def (test_\w+)\s*\(/gm)].map((m) => m[1]!).slice(0, 100);
}

export function harborTask(record: EvalRecord, sandbox: HarborSandboxSettings, verifierSource: string): HarborTaskFiles {
  const name = harborTaskName(record);
  const slot = answerSlot(record);
  const requirements = record.requirements.filter((r) => REQUIREMENT.test(r));
  if (requirements.length !== record.requirements.length) throw new HarborExportError(`record ${record.functionId}: a package pin is not name==version`);
  const toml = [
    `schema_version = ${tomlString(HARBOR_SCHEMA_VERSION)}`,
    `artifacts = [${tomlString(ANSWER_PATH)}]`,
    '',
    '[metadata]',
    `function_id = ${tomlString(record.functionId)}`,
    `repo = ${tomlString(record.repo)}`,
    `path = ${tomlString(record.path)}`,
    `qualname = ${tomlString(record.qualname)}`,
    `kind = "function"`,
    `category = "python-function"`,
    '',
    '[verifier]',
    `timeout_sec = ${sandbox.timeoutSec + 120}`,
    `environment_mode = "separate"`,
    '',
    '# The verifier\'s own container: the same image. It needs no network (the packages are in the',
    '# image); add network_mode = "no-network" where the provider can enforce it.',
    '[verifier.environment]',
    'build_timeout_sec = 900',
    `cpus = ${sandbox.cpus}`,
    `memory_mb = ${sandbox.memoryMb}`,
    '',
    '[agent]',
    'timeout_sec = 600',
    '',
    '[environment]',
    'build_timeout_sec = 900',
    `cpus = ${sandbox.cpus}`,
    `memory_mb = ${sandbox.memoryMb}`,
    '',
  ].join('\n');
  const dockerfile = [
    '# The project\'s sandbox image (its harness under /opt/repost/harness), with this record\'s',
    '# pinned packages installed at build time so the verifier runs without a network.',
    `FROM ${sandbox.image}`,
    'USER root',
    ...(requirements.length ? [`RUN python3 -m pip install --no-cache-dir --break-system-packages --target /opt/repost/packages ${requirements.join(' ')}`] : []),
    'RUN mkdir -p /app /logs/verifier /run/repost && chmod 0700 /run/repost && chown 10001:10001 /scratch && chmod 0700 /scratch',
    'WORKDIR /app',
    '# PID 1 only sleeps: the harness ends every other process when a script ends, and PID 1 is the one it spares.',
    'ENTRYPOINT ["/bin/sh", "-c", "exec sleep infinity", "--"]',
    '',
  ].join('\n');
  // The verifier runs the answer as eval.ts does: in a process of its own (`isolated`).
  const isolated = isolatedSlot(record);
  const task = { name: record.name, qualname: record.qualname, kind: 'function', script: slot.script, indent: slot.indent, preambleAt: slot.preambleAt, isolated, timeoutSec: sandbox.timeoutSec, tests: testFunctions(record.evalScript) };
  const testSh = ['#!/bin/bash', '# Verifies the answer in /app/solution.py: see verify.py.', 'mkdir -p /logs/verifier', 'exec python3 -I "$(dirname "$0")/verify.py"', ''].join('\n');
  // A quoted heredoc writes the text as it is; its terminator is chosen so the text cannot end it.
  let eof = 'REPOST_GROUND_TRUTH';
  const truth = dedentLike(record.origFunc).replace(/\s+$/, '');
  while (truth.split('\n').includes(eof)) eof += '_';
  const solve = ['#!/bin/bash', `# Writes the ground truth of ${record.name} (the oracle's answer).`, 'mkdir -p /app', `cat > ${ANSWER_PATH} <<'${eof}'`, truth, eof, ''].join('\n');
  return {
    name,
    files: {
      'task.toml': { text: toml },
      'instruction.md': { text: instructionOf(record) },
      'environment/Dockerfile': { text: dockerfile },
      'tests/test.sh': { text: testSh, mode: 0o755 },
      'tests/verify.py': { text: verifierSource },
      'tests/task.json': { text: JSON.stringify(task, null, 1) + '\n' },
      'solution/solve.sh': { text: solve, mode: 0o755 },
    },
  };
}

function datasetToml(runId: string, tasks: number): string {
  const slug = runId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'run';
  return [
    'schema_version = "1.0"',
    '',
    '[dataset]',
    `name = ${tomlString(`repost/${slug}`)}`,
    `description = ${tomlString(`RepoST environments of run ${runId}: ${tasks} task(s), one per function`)}`,
    'keywords = ["repost", "python", "code-generation"]',
    '',
  ].join('\n');
}

export interface HarborExportResult {
  dir: string;
  tasks: string[];
}

function checkTarget(dir: string): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory()) throw new HarborExportError(`${dir} exists and is not a folder`);
  const entries = fs.readdirSync(dir);
  if (entries.length === 0) return;
  const marker = path.join(dir, MARKER);
  let ours = false;
  try {
    ours = fs.lstatSync(marker).isFile() && (JSON.parse(fs.readFileSync(marker, 'utf8')) as { exporter?: unknown }).exporter === MARKER_EXPORTER;
  } catch {
    ours = false;
  }
  if (!ours) throw new HarborExportError(`${dir} is not empty and is not an earlier Harbor export (no ${MARKER}); nothing was changed: choose another --out`);
}

/** Writes the Harbor dataset folder (built beside the target, swapped in when complete). */
export async function exportHarbor(reader: RunReader, toDir: string, sandbox: HarborSandboxSettings, now = new Date()): Promise<HarborExportResult> {
  const dir = path.resolve(toDir);
  checkTarget(dir);
  const verifier = fs.readFileSync(VERIFIER_SOURCE, 'utf8');
  const staging = `${dir}.harbor-${process.pid}-${randomBytes(3).toString('hex')}`;
  const names: string[] = [];
  try {
    fs.mkdirSync(staging, { recursive: true });
    for await (const raw of reader.records()) {
      const line = EvalDatasetLineSchema.parse(raw);
      const record = toEvalRecord(line);
      const task = harborTask(record, sandbox, verifier);
      if (names.includes(task.name)) throw new HarborExportError(`two records map to task ${task.name}`);
      names.push(task.name);
      for (const [rel, file] of Object.entries(task.files)) {
        const target = path.join(staging, task.name, rel);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        await writeFileAtomic(target, file.text);
        if (file.mode) fs.chmodSync(target, file.mode);
      }
    }
    if (names.length === 0) throw new HarborExportError(`nothing to export: run ${reader.runId} has no accepted function records (${reader.location})`);
    await writeFileAtomic(path.join(staging, 'dataset.toml'), datasetToml(reader.runId, names.length));
    await writeFileAtomic(path.join(staging, MARKER), JSON.stringify({ exporter: MARKER_EXPORTER, runId: reader.runId, image: sandbox.image, exportedAt: now.toISOString() }, null, 2) + '\n');
    const old = fs.existsSync(dir) ? `${staging}.old` : null;
    if (old) fs.renameSync(dir, old);
    fs.renameSync(staging, dir);
    if (old) fs.rmSync(old, { recursive: true, force: true });
    return { dir, tasks: names };
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
