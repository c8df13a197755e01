/** The request and outcome shapes every LLM step of the pipeline speaks. */

/** A pipeline step that talks to the LLM; it picks the model and tags every record. */
export type LlmStep =
  | 'sandbox'
  | 'aggregate'
  | 'tests'
  | 'debug'
  | 'coverage'
  | 'mutation'
  | 'check_functionality'
  | 'check_tests'
  | 'docstring'
  | 'solve'
  | 'repair'
  | 'candidate_tests'
  | 'test_inputs'
  | 'check_assertion'
  // The same steps for a whole class (a class environment, and class-level evaluation).
  | 'class_sandbox'
  | 'class_tests'
  | 'class_debug'
  | 'class_coverage'
  | 'class_check_functionality'
  | 'class_check_tests'
  | 'class_solve'
  | 'class_repair';

export const LLM_STEPS: readonly LlmStep[] = [
  'sandbox',
  'aggregate',
  'tests',
  'debug',
  'coverage',
  'mutation',
  'check_functionality',
  'check_tests',
  'docstring',
  'solve',
  'repair',
  'candidate_tests',
  'test_inputs',
  'class_sandbox',
  'class_tests',
  'class_debug',
  'class_coverage',
  'class_check_functionality',
  'class_check_tests',
  'class_solve',
  'class_repair',
  'check_assertion',
];

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  step: LlmStep;
  /** Deterministic id of the function the call is about; exchanges are indexed by it. */
  functionId: string;
  runId?: string;
  repoId?: string;
  messages: ChatMessage[];
  /** Overrides the model configured for the step. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  /** Id and version of the prompt template that produced the messages, stored with the record. */
  promptId?: string;
  promptVersion?: string;
  /**
   * Regeneration attempt (0 = first). Part of the cache key, so regenerating after an unusable
   * answer asks the model again instead of reading back the answer being replaced, while a
   * replay of the same attempt is still answered from the cache.
   */
  attempt?: number;
}

export interface ChatOutcome {
  text: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those the endpoint's prompt cache served (priced at the cached price). */
  cachedPromptTokens?: number;
  costUsd: number;
  cached: boolean;
  latencyMs: number;
  finishReason: string | null;
  /** Artifact key of the recorded exchange (request, response, tokens, latency). */
  exchangeKey: string;
}
