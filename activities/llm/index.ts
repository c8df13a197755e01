/** The LLM gateway: the one way the pipeline talks to a language model. */
export * from './types';
export { LlmGateway, modelForStep, STEP_HEADER, FUNCTION_HEADER, type LlmGatewayOptions } from './gateway';
export { LlmTransientError, LlmPermanentError, classifyLlmError, classifyHttpStatus, parseRetryAfter, type LlmError } from './errors';
export { chatCompletionBody, readCompletion, CompletionSchema, type ChatCall, type CompletionRead } from './completion';
export { RateLimiter, TokenBucket, type RateLimits, type RatePermit } from './rate-limiter';
export { cacheKeyOf } from './cache';
export { EXCHANGE_SCHEMA, type ExchangeRecord } from './exchange';
export { estimateCostUsd, type PriceTable } from './cost';
export { estimateTokens, estimateMessagesTokens } from './tokens';
export {
  renderPrompt,
  loadPromptTemplate,
  readPromptMarker,
  newImplementationName,
  testFunctionName,
  definedFunctionName,
  DEFAULT_SANDBOX_CACHE_DIR,
  PROMPT_KINDS,
  type PromptKind,
  type PromptVars,
  type RenderedPrompt,
} from './prompts';
export {
  parseCodeAnswer,
  parseVerdict,
  parseDocstringAnswer,
  findAbbreviation,
  type CodeParse,
  type CodeParseFailure,
  type VerdictParse,
  type VerdictAnswer,
  type VerdictFailure,
} from './parsers';
