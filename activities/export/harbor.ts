/**
 * A run's accepted records as a Harbor dataset folder: one task folder per function record and per
 * class environment, each with `task.toml` (Harbor's task schema 1.4), `instruction.md` (the
 * evaluation's solve prompt and where the answer goes), `environment/Dockerfile` (the sandbox image
 * with the record's pinned packages installed at build time, so verification needs no network),
 * `tests/` (test.sh, the verifier and the record's evaluation script with the slot where the answer
 * goes), and `solution/solve.sh` (writes the ground truth). The verifier runs in its own container
 * (`environment_mode = "separate"`): the agent never sees the tests, and only its answer file
 * crosses over. A `dataset.toml` names the dataset. What differs by kind (the instruction, the
 * slot, how the verifier scores) is harbor-targets.ts's.
 *
 * Every name and path comes from this module, never from the record: a task's folder name is a
 * bounded slug of the target's name plus the record's id hash; the record's text goes only into
 * file contents (JSON-encoded for the verifier, a quoted heredoc for solve.sh).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { EvalDatasetLineSchema, toEvalRecord } from '../eval/dataset';
import type { RunReader } from '../dataset/run-reader';
import { writeFileAtomic } from '../store/artifacts';
import { ANSWER_PATH, HarborExportError, classTarget, functionTarget, type HarborTarget } from './harbor-targets';

export { ANSWER_PATH, HarborExportError, answerSlot, classTarget, functionTarget, isolatedSlot, type HarborTarget } from './harbor-targets';

export const HARBOR_SCHEMA_VERSION = '1.4';
const VERIFIER_SOURCE = path.join(__dirname, 'harbor-verifier.py');
const MARKER = '.repost-harbor-export.json';
const MARKER_EXPORTER = 'repost-factory harbor';
/** Longest task folder name: Docker Compose project names and Harbor's names stay well within it. */
const MAX_TASK_NAME = 63;

export interface HarborSandboxSettings {
  /** The image every task's environment starts FROM (the project's sandbox image). */
  image: string;
  memoryMb: number;
  cpus: number;
  /** One verification's time limit (the run's sandbox timeout); a class task's per test. */
  timeoutSec: number;
}

export interface HarborTaskFiles {
  name: string;
  files: Record<string, { text: string; mode?: number }>;
}

/** A bounded, safe task name: [a-z0-9-], starting with a letter, ending with the record's hash. */
export function harborTaskName(target: Pick<HarborTarget, 'qualname' | 'id'>): string {
  const hash = createHash('sha256').update(target.id).digest('hex').slice(0, 12);
  const slug = target.qualname
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
/** A [metadata] key this module writes (the values are TOML strings). */
const METADATA_KEY = /^[a-z_]{1,40}$/;

/** A record's task folder, whichever its kind (harbor-targets.ts says what the kind changes). */
export function harborTask(target: HarborTarget, sandbox: HarborSandboxSettings, verifierSource: string): HarborTaskFiles {
  const name = harborTaskName(target);
  const requirements = target.requirements.filter((r) => REQUIREMENT.test(r));
  if (requirements.length !== target.requirements.length) throw new HarborExportError(`record ${target.id}: a package pin is not name==version`);
  const toml = [
    `schema_version = ${tomlString(HARBOR_SCHEMA_VERSION)}`,
    `artifacts = [${tomlString(ANSWER_PATH)}]`,
    '',
    '[metadata]',
    ...Object.entries(target.metadata)
      .filter(([k, v]) => METADATA_KEY.test(k) && typeof v === 'string')
      .map(([k, v]) => `${k} = ${tomlString(v)}`),
    '',
    '[verifier]',
    `timeout_sec = ${target.runTimeoutSec + 120}`,
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
    '# /scratch as the factory mounts it: the scripts\' user owns it; mode 0710 lets an isolated run\'s candidate (the same group) reach the run\'s folder without listing it.',
    'RUN mkdir -p /app /logs/verifier /run/repost && chmod 0700 /run/repost && chown 10001:10001 /scratch && chmod 0710 /scratch',
    'WORKDIR /app',
    '# PID 1 only sleeps: the harness ends every other process when a script ends, and PID 1 is the one it spares.',
    'ENTRYPOINT ["/bin/sh", "-c", "exec sleep infinity", "--"]',
    '',
  ].join('\n');
  const testSh = ['#!/bin/bash', `# Verifies the answer in ${ANSWER_PATH}: see verify.py.`, 'mkdir -p /logs/verifier', 'exec python3 -I "$(dirname "$0")/verify.py"', ''].join('\n');
  // A quoted heredoc writes the text as it is; its terminator is chosen so the text cannot end it.
  let eof = 'REPOST_GROUND_TRUTH';
  while (target.truth.split('\n').includes(eof)) eof += '_';
  const solve = ['#!/bin/bash', `# Writes the ground truth of ${target.name} (the oracle's answer).`, 'mkdir -p /app', `cat > ${ANSWER_PATH} <<'${eof}'`, target.truth, eof, ''].join('\n');
  return {
    name,
    files: {
      'task.toml': { text: toml },
      'instruction.md': { text: target.instruction },
      'environment/Dockerfile': { text: dockerfile },
      'tests/test.sh': { text: testSh, mode: 0o755 },
      'tests/verify.py': { text: verifierSource },
      'tests/task.json': { text: JSON.stringify(target.verifier, null, 1) + '\n' },
      'solution/solve.sh': { text: solve, mode: 0o755 },
    },
  };
}

function datasetToml(runId: string, functions: number, classes: number): string {
  const slug = runId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'run';
  return [
    'schema_version = "1.0"',
    '',
    '[dataset]',
    `name = ${tomlString(`repost/${slug}`)}`,
    `description = ${tomlString(`RepoST environments of run ${runId}: ${functions} function task(s)${classes ? ` and ${classes} class task(s)` : ''}, one per record`)}`,
    'keywords = ["repost", "python", "code-generation"]',
    '',
  ].join('\n');
}

export interface HarborExportResult {
  dir: string;
  tasks: string[];
  /** How many of the tasks are class environments (the others are functions). */
  classes: number;
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
    const write = async (target: HarborTarget) => {
      const task = harborTask(target, sandbox, verifier);
      if (names.includes(task.name)) throw new HarborExportError(`two records map to task ${task.name}`);
      names.push(task.name);
      for (const [rel, file] of Object.entries(task.files)) {
        const at = path.join(staging, task.name, rel);
        fs.mkdirSync(path.dirname(at), { recursive: true });
        await writeFileAtomic(at, file.text);
        if (file.mode) fs.chmodSync(at, file.mode);
      }
    };
    let functions = 0;
    let classes = 0;
    for await (const raw of reader.records()) {
      await write(functionTarget(toEvalRecord(EvalDatasetLineSchema.parse(raw)), sandbox.timeoutSec));
      functions++;
    }
    for await (const record of reader.classRecords()) {
      await write(classTarget(record, sandbox.timeoutSec));
      classes++;
    }
    if (names.length === 0) throw new HarborExportError(`nothing to export: run ${reader.runId} has no accepted function records or class environments (${reader.location})`);
    await writeFileAtomic(path.join(staging, 'dataset.toml'), datasetToml(reader.runId, functions, classes));
    await writeFileAtomic(path.join(staging, MARKER), JSON.stringify({ exporter: MARKER_EXPORTER, runId: reader.runId, image: sandbox.image, exportedAt: now.toISOString() }, null, 2) + '\n');
    const old = fs.existsSync(dir) ? `${staging}.old` : null;
    if (old) fs.renameSync(dir, old);
    fs.renameSync(staging, dir);
    if (old) fs.rmSync(old, { recursive: true, force: true });
    return { dir, tasks: names, classes };
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
