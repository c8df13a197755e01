/**
 * Reads the shell lines an LLM suggests for setting up a script ("pip install pandas==2.1").
 * They are never executed: only pip installs of plain requirements (a distribution name, optional
 * extras, optional version constraints) are accepted; the requirement strings are returned and
 * installed by the package cache like any other. Everything else is reported as rejected.
 */
import { DISTRIBUTION_NAME } from './packages';

export interface ParsedInstallCommands {
  /** Valid requirement strings, e.g. `numpy`, `pandas==2.1.4`, `requests[socks]>=2,<3`. */
  ok: string[];
  /** What was refused, each with the reason. */
  rejected: string[];
}

/** Flags that change nothing about what is installed; anything else (an index, a file, a URL) is refused. */
const HARMLESS_FLAGS = new Set([
  '-q', '--quiet', '-qq', '-U', '--upgrade', '--no-cache-dir', '--user', '--break-system-packages', '--pre',
  '--no-input', '--disable-pip-version-check', '-y', '--yes', '--no-warn-script-location', '--progress-bar=off',
]);

const PIP_PREFIXES = [
  ['pip', 'install'],
  ['pip3', 'install'],
  ['python', '-m', 'pip', 'install'],
  ['python3', '-m', 'pip', 'install'],
  ['py', '-m', 'pip', 'install'],
];

const VERSION_CLAUSE = /^(===|==|~=|!=|>=|<=|<|>)\s*[A-Za-z0-9][A-Za-z0-9.*+!_-]*$/;
/** name, [extras], then comma-separated version clauses. */
const REQUIREMENT = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?(.*)$/;

/** Returns the requirement in a canonical spelling, or null when it is not a plain requirement. */
export function validateRequirement(token: string): string | null {
  const m = REQUIREMENT.exec(token.trim());
  if (!m) return null;
  const [, name, extras = '', spec = ''] = m;
  if (!DISTRIBUTION_NAME.test(name!)) return null;
  const clauses = spec.trim() === '' ? [] : spec.split(',').map((c) => c.trim());
  if (!clauses.every((c) => VERSION_CLAUSE.test(c))) return null;
  return `${name}${extras}${clauses.map((c) => c.replace(/\s+/g, '')).join(',')}`;
}

/** Splits one command into words the way a shell would for plain words and simple quotes. */
function words(command: string): string[] | null {
  const out: string[] = [];
  const re = /\s*(?:'([^']*)'|"([^"$`\\]*)"|([^\s'"]+))/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(command)) && m[0].length > 0) {
    out.push(m[1] ?? m[2] ?? m[3]!);
    consumed = re.lastIndex;
  }
  return command.slice(consumed).trim() === '' ? out : null;
}

export function parseInstallCommands(bash: string): ParsedInstallCommands {
  const ok: string[] = [];
  const rejected: string[] = [];
  const seen = new Set<string>();
  // Line continuations join; `&&` and `;` separate commands; comments and prompts are dropped.
  const text = bash.replace(/```(?:bash|sh|shell|console)?/g, '\n').replace(/\\\r?\n/g, ' ');
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/^\s*(?:\$|!|%)\s*/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    for (const segment of line.split(/\s*(?:&&|;)\s*/)) {
      const command = segment.replace(/\s+#.*$/, '').trim();
      if (command === '') continue;
      const unquoted = command.replace(/'[^']*'|"[^"$`\\]*"/g, 'q');
      if (/[|`$<>(){}\\*?]/.test(unquoted)) {
        rejected.push(`${command} (shell syntax is not accepted)`);
        continue;
      }
      const argv = words(command);
      const prefix = argv && PIP_PREFIXES.find((p) => p.every((w, i) => argv[i] === w));
      if (!argv || !prefix) {
        rejected.push(`${command} (not a pip install)`);
        continue;
      }
      const args = argv.slice(prefix.length);
      // An option that changes where packages come from (-r, -e, --index-url ...) voids the command.
      const foreign = args.filter((a) => a.startsWith('-') && !HARMLESS_FLAGS.has(a));
      if (foreign.length > 0) {
        rejected.push(`${command} (pip option not accepted: ${foreign.join(' ')})`);
        continue;
      }
      const names = args.filter((a) => !a.startsWith('-'));
      if (names.length === 0) rejected.push(`${command} (names no package)`);
      for (const arg of names) {
        const requirement = validateRequirement(arg);
        if (!requirement) {
          rejected.push(`${arg} (not a package name with an optional version)`);
        } else if (!seen.has(requirement)) {
          seen.add(requirement);
          ok.push(requirement);
        }
      }
    }
  }
  return { ok, rejected };
}
