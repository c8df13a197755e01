/**
 * What a sandbox run returns. Everything that crosses from the container (the harness's JSON)
 * is parsed with these schemas.
 */
import { z } from 'zod';

export const MissingBranchSchema = z.object({
  from: z.number().int(),
  /** null: the branch leaves the function (return, raise, falling off the end). */
  to: z.number().int().nullable(),
  /** `from->to` or `from->exit`, as quoted to the LLM. */
  text: z.string(),
});

/** Coverage of one function's line span (the `<name>_new_implementation` copy or the original). */
export const CoverageReportSchema = z.object({
  target: z.string(),
  startLine: z.number().int(),
  endLine: z.number().int(),
  /** False when the span has no branch point: then `rate` is the line rate and the summary says so. */
  hasBranches: z.boolean(),
  /** Branch (arc) rate when the span has branches, else line rate; compare this with the threshold. */
  rate: z.number().min(0).max(1),
  lines: z.object({ total: z.number().int(), covered: z.number().int(), rate: z.number() }),
  /** Arcs leaving branch points: taken / possible, as coverage.py counts branches. */
  branches: z.object({ total: z.number().int(), taken: z.number().int(), rate: z.number().nullable() }),
  /** Every arc leaving a line of the span (branch points or not). */
  arcs: z.object({ total: z.number().int(), taken: z.number().int() }),
  missingLines: z.array(z.number().int()),
  missingBranches: z.array(MissingBranchSchema),
  /** One paragraph ready to be quoted in a coverage round. */
  summary: z.string(),
  /**
   * A class target: the figures above are over all its methods (the class body's own statements
   * left out), and these are each method's (those of nested classes as `Inner.method`).
   */
  methods: z
    .array(
      z.object({
        name: z.string(),
        startLine: z.number().int(),
        endLine: z.number().int(),
        hasBranches: z.boolean(),
        rate: z.number().min(0).max(1),
        lines: z.object({ total: z.number().int(), covered: z.number().int(), rate: z.number() }),
        branches: z.object({ total: z.number().int(), taken: z.number().int(), rate: z.number().nullable() }),
      }),
    )
    .optional(),
});
export type CoverageReport = z.infer<typeof CoverageReportSchema>;

export const SandboxStatusSchema = z.enum(['passed', 'failed', 'error', 'timeout', 'oom', 'infrastructure']);
/**
 * passed: exit 0, confirmed by the supervisor (the main module finished, its report was clean). failed: a test assertion failed (AssertionError, or unittest reporting only
 * failures). error: any other non-zero exit (uncaught exception, syntax error, killed by a signal).
 * timeout / oom: the wall-clock or memory limit ended the run. infrastructure: the sandbox itself
 * failed (Docker unreachable, container could not start); retrying may help, the script is not at fault.
 */
export type SandboxStatus = z.infer<typeof SandboxStatusSchema>;

export const PythonExceptionSchema = z.object({ type: z.string(), message: z.string(), traceback: z.string() });
export type PythonException = z.infer<typeof PythonExceptionSchema>;

export const InstalledPackageSchema = z.object({
  name: z.string(),
  version: z.string(),
  /** The cutoff the version was chosen as of (the code's date plus the grace period); absent: the newest release. */
  asOf: z.string().optional(),
});
export type InstalledPackage = z.infer<typeof InstalledPackageSchema>;

/** One snippet's result from the harness's test runner (`repost_test_runner.py`). */
export const RunnerSnippetSchema = z.object({
  status: z.enum(['pass', 'fail', 'value', 'error']),
  detail: z.string(),
  /** Seconds the snippet took, measured by the runner around it (absent in results from before durations were reported). */
  durationSec: z.number().nonnegative().optional(),
  /** A snippet that failed on an AssertionError: where it stopped in the script (its innermost frame there) and the assertion's message (the compared values in an isolated run). */
  assertion: z.object({ line: z.number().int().positive(), function: z.string().max(200), message: z.string().max(500) }).optional(),
});
export type RunnerAssertion = NonNullable<z.infer<typeof RunnerSnippetSchema>['assertion']>;
/** What the test runner reported, through the supervisor: a failure to load the script, or a result per snippet that ended. */
export const RunnerReportSchema = z.object({ loadFailure: z.string().nullable(), snippets: z.array(RunnerSnippetSchema) });
export type RunnerReport = z.infer<typeof RunnerReportSchema>;

/** One mutant of a mutation run, as the supervisor decided it (repost_mutation_run.py). */
export const MutantResultSchema = z.object({
  operator: z.string(),
  /** The mutated line within the function (its first line is 1). */
  line: z.number().int(),
  /** Unified diff of the function's source against the original. */
  diff: z.string(),
  /** killed: the script failed; timeout: killed by its time limit; not_run: the run's budget or container gave out first. */
  outcome: z.enum(['killed', 'survived', 'timeout', 'not_run']),
  /** How a killed mutant failed: the exception's type, `exit N`, `signal N`, `oom`, `unconfirmed`, `lost`, `timeout`. */
  kind: z.string().nullable(),
  ms: z.number(),
  /** Made only to measure the rules (`keepLeftOut`): why no allowed test can see it (output, message, equivalent); never scored. */
  leftOut: z.string().nullable().optional(),
});
export type MutantResult = z.infer<typeof MutantResultSchema>;

/** What a mutation run reports besides the ground truth's own run (the run's status). */
export const MutationReportSchema = z.object({
  target: z.string(),
  /** warm: the script's modules imported once in the warm parent; plain: each job imports them (the control failed warm). */
  mode: z.enum(['warm', 'plain']),
  /** Mutation sites found; how many were tried; left out as duplicates or for not compiling. */
  candidates: z.number().int(),
  examined: z.number().int(),
  duplicates: z.number().int(),
  invalid: z.number().int(),
  /**
   * Mutants no allowed test can see, by reason, never run nor scored: `output` (inside a printing,
   * logging or warning call), `message` (the text of an exception message, or a text only printed
   * or logged), `equivalent` (the same bytecode as the original). Empty from an older harness.
   */
  leftOut: z.record(z.string(), z.number().int()).default({}),
  /** The ground truth's time in the warm parent (null: it could not run). */
  controlMs: z.number().nullable(),
  mutantTimeoutSec: z.number().nullable(),
  budgetSec: z.number(),
  warmStarts: z.number().int(),
  mutants: z.array(MutantResultSchema),
  notes: z.array(z.string()),
});
export type MutationReport = z.infer<typeof MutationReportSchema>;

/**
 * How the candidate of an isolated run failed it, as the trusted process saw it: it ended its
 * process (`candidate_exit`), sent a value the harness does not decode (`forbidden_value`), broke
 * the protocol (`protocol`), or returned a value of another type than the ground truth's on the
 * same call (`wrong_type`).
 */
export const CANDIDATE_FAILURE_KINDS = ['candidate_exit', 'forbidden_value', 'protocol', 'wrong_type'] as const;
export const CandidateFailureSchema = z.object({ kind: z.enum(CANDIDATE_FAILURE_KINDS).catch('protocol'), detail: z.string() });
export type CandidateFailure = z.infer<typeof CandidateFailureSchema>;

export const SandboxResultSchema = z.object({
  status: SandboxStatusSchema,
  /** null when the run was killed (timeout) or its status was lost. */
  exitCode: z.number().nullable(),
  /** How long the script ran (exec start to end); waiting for a container or an install is not counted. */
  durationMs: z.number(),
  stdout: z.string(),
  stderr: z.string(),
  /** True when stdout or stderr was cut (the middle is replaced by a marker line). */
  truncated: z.boolean(),
  exception: PythonExceptionSchema.nullable(),
  coverage: CoverageReportSchema.nullable(),
  /** Third-party distributions the script needed (the installed set, dependencies included). */
  packages: z.array(InstalledPackageSchema),
  /** The requirement set those packages were installed for (what an offline image must provide). */
  requirements: z.array(z.string()).default([]),
  /** Harness remarks: installs done or refused, coverage target missing, sandbox faults. */
  notes: z.array(z.string()).default([]),
  /** A test-runner run's results (RunRequest.runner), as the supervisor received them; absent or null otherwise or when its report was refused. */
  runner: RunnerReportSchema.nullable().optional(),
  /** A mutation run's mutants (RunRequest.mutation); the rest of the result is the ground truth's run. */
  mutation: MutationReportSchema.nullable().optional(),
  /** An isolated run (RunRequest.candidate) the candidate failed in a way of its own; null when it did not. */
  candidate: CandidateFailureSchema.nullable().optional(),
});
export type SandboxResult = z.infer<typeof SandboxResultSchema>;


/** What launch.py leaves in the run directory. */
export const HarnessResultSchema = z.object({
  notes: z.array(z.string()).default([]),
  coverage: CoverageReportSchema.nullable().optional(),
  /** The harness's own time limit ended the script. */
  timedOut: z.boolean().default(false),
  /** The module an uncaught ModuleNotFoundError named. */
  missingModule: z.string().nullable().default(null),
  /** Why the supervisor did not take the process's own exit status as the run's (os._exit(0) mid-run, a refused report, ...). */
  verdict: z.string().nullable().default(null),
  runner: RunnerReportSchema.nullable().default(null),
  mutation: MutationReportSchema.nullable().default(null),
  candidate: CandidateFailureSchema.nullable().default(null),
});

export const AstComparisonSchema = z.object({ equivalent: z.boolean(), difference: z.string().nullable() });
export type AstComparison = z.infer<typeof AstComparisonSchema>;

/** One source's `ast` round trip: its normalised form, or why Python could not parse it. */
export const AstNormalizationResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), normalized: z.string() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
export type AstNormalization = z.infer<typeof AstNormalizationResultSchema>;
export const AstNormalizationSchema = z.object({ results: z.array(AstNormalizationResultSchema) });
