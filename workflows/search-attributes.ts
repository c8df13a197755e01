/**
 * Custom search attributes, registered with the dev server at start and set by the workflows,
 * so the Temporal UI can filter a crawl's runs, e.g. `RepostRunId = "demo-..." AND RepostOutcome = "rejected"`.
 */
import { defineSearchAttributeKey } from '@temporalio/common';

/** Name -> type as the `temporal` CLI spells it (`--search-attribute NAME=Type`). */
export const SEARCH_ATTRIBUTES = {
  RepostRunId: 'Keyword',
  RepostRepo: 'Keyword',
  RepostFunction: 'Keyword',
  RepostOutcome: 'Keyword',
  RepostStage: 'Keyword',
  RepostSplit: 'Keyword',
} as const;

export const RunIdKey = defineSearchAttributeKey('RepostRunId', 'KEYWORD');
export const RepoKey = defineSearchAttributeKey('RepostRepo', 'KEYWORD');
export const FunctionKey = defineSearchAttributeKey('RepostFunction', 'KEYWORD');
export const OutcomeKey = defineSearchAttributeKey('RepostOutcome', 'KEYWORD');
export const StageKey = defineSearchAttributeKey('RepostStage', 'KEYWORD');
export const SplitKey = defineSearchAttributeKey('RepostSplit', 'KEYWORD');
