/** The sandbox executor: isolated runs of untrusted Python, packages, coverage, AST comparison. */
export {
  CoverageReportSchema,
  SandboxResultSchema,
  SandboxStatusSchema,
  PythonExceptionSchema,
  InstalledPackageSchema,
  AstComparisonSchema,
  AstNormalizationSchema,
  type AstNormalization,
  type CoverageReport,
  type SandboxResult,
  type SandboxStatus,
  type PythonException,
  type InstalledPackage,
  type AstComparison,
} from './schema';
export { SandboxExecutor } from './executor';
export {
  SandboxCancelledError,
  runLimitsOf,
  type RunLimits,
  type RunRequest,
  type RunHooks,
  type SandboxExecutorConfig,
  type SandboxExecutorOptions,
} from './run-request';
export { errorMessageOf, summaryLine } from './result-text';
export { withNewImplementation, withNewClassImplementation, renamedClassCopy, newImplementationName, isolatedPlacement, NEW_IMPLEMENTATION_SUFFIX, type IsolatedPlacement } from './new-implementation';
export type { CandidateSpec } from './harness-command';
export { parseInstallCommands, validateRequirement, type ParsedInstallCommands } from './install-commands';
export { IMPORT_TO_DISTRIBUTION, distributionForImport } from './packages';
export { PackageStore, requirementSetKey, type PackageSet, type EnsureResult } from './package-store';
export { sandboxActivityBudgetMs } from './budget';
export { isDockerUnavailable } from './docker-errors';
export { parsePythonException, missingModuleName } from './python-exception';
