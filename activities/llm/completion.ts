/**
 * One chat completion as the endpoint sees it, whichever way it travels: the request body the
 * live call sends is the body a batch request line carries, and a completion body is read the
 * same way whether it came back from a live call or from a line of a batch's output file.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { LlmTransientError } from './errors';
import type { ChatMessage } from './types';

/** What determines the answer of one call: the resolved model and sampling of a `ChatRequest`. */
export interface ChatCall {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
}

/** The chat completion request body of a call (live: the HTTP body; batch: a request line's `body`). */
export function chatCompletionBody(call: ChatCall): ChatCompletionCreateParamsNonStreaming {
  return { model: call.model, messages: call.messages, temperature: call.temperature, max_tokens: call.maxTokens };
}

/** What an OpenAI-compatible chat completion must contain for us to use it. */
export const CompletionSchema = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }).optional(),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().nonnegative(),
      completion_tokens: z.number().nonnegative(),
      // Prompt tokens the endpoint's prompt cache served (OpenAI's field; others may omit it).
      prompt_tokens_details: z.object({ cached_tokens: z.number().nonnegative().nullable().optional() }).nullable().optional(),
    })
    .nullable()
    .optional(),
});

/** The parts of a completion the pipeline uses. `usage` is null when the endpoint reported none. */
export interface CompletionRead {
  text: string;
  finishReason: string | null;
  model?: string;
  id?: string;
  /** `cachedPromptTokens`: of the prompt tokens, those the endpoint's prompt cache served (0 when not reported). */
  usage: { promptTokens: number; completionTokens: number; cachedPromptTokens: number } | null;
}

/**
 * Reads a completion body. A body without usable choices is a transient fault (a proxy or server
 * hiccup: worth asking again), the same wherever the body came from; `where` names the model and
 * endpoint (or batch) in the message.
 */
export function readCompletion(raw: unknown, where: string): CompletionRead {
  const parsed = CompletionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new LlmTransientError(`LLM endpoint returned a completion without usable choices (${where}): ${parsed.error.issues[0]?.message ?? 'invalid'}`, undefined, undefined);
  }
  const completion = parsed.data;
  const choice = completion.choices[0]!;
  return {
    text: choice.message?.content ?? '',
    finishReason: choice.finish_reason ?? null,
    ...(completion.model !== undefined ? { model: completion.model } : {}),
    ...(completion.id !== undefined ? { id: completion.id } : {}),
    usage: completion.usage
      ? {
          promptTokens: completion.usage.prompt_tokens,
          completionTokens: completion.usage.completion_tokens,
          cachedPromptTokens: Math.min(completion.usage.prompt_tokens_details?.cached_tokens ?? 0, completion.usage.prompt_tokens),
        }
      : null,
  };
}
