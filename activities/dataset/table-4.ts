/**
 * The rows of RepoST's Table 4 as the report and the dataset card print them: one label, the
 * figure it reads from `SplitStatistics`, and how it is formatted.
 */
import type { SplitStatistics } from './statistics';

export type FigureKind = 'count' | 'average' | 'share';

export interface Table4Row {
  label: string;
  key: keyof SplitStatistics;
  kind: FigureKind;
}

export const TABLE_4_ROWS: readonly Table4Row[] = [
  { label: 'Repositories', key: 'repositories', kind: 'count' },
  { label: 'Functions', key: 'functions', kind: 'count' },
  { label: 'Target function tokens (avg)', key: 'avgTargetTokens', kind: 'average' },
  { label: 'Target function lines (avg)', key: 'avgTargetLines', kind: 'average' },
  { label: 'Eval script tokens (avg)', key: 'avgEvalScriptTokens', kind: 'average' },
  { label: 'Eval script lines (avg)', key: 'avgEvalScriptLines', kind: 'average' },
  { label: 'Test cases (asserts) per script (avg)', key: 'avgTestsPerScript', kind: 'average' },
  { label: 'Branch coverage (avg)', key: 'avgBranchCoverage', kind: 'share' },
  { label: 'Standalone functions', key: 'standaloneShare', kind: 'share' },
  { label: 'External libraries (distinct)', key: 'externalLibraries', kind: 'count' },
  { label: 'LLM tokens per record (avg)', key: 'avgLlmTokensPerRecord', kind: 'average' },
];

export function formatFigure(value: number | null | undefined, kind: FigureKind): string {
  if (value === null || value === undefined) return '–';
  if (kind === 'share') return `${(value * 100).toFixed(1)}%`;
  if (kind === 'average') return value.toFixed(1);
  return String(value);
}
