/**
 * Rejection-sampling fine-tuning data, as RepoST builds it: for each training function the
 * ground truth and every sampled (or repaired) candidate that passed the function's tests,
 * deduplicated by their normalised form (Python's `ast` round trip, so layout and comments do
 * not make a copy look new), each written as a chat example: the solve prompt (context and
 * signature) as the user turn, the passing definition as the assistant's answer.
 */
import { z } from 'zod';
import type { ChatMessage } from '../llm/types';
import type { AstNormalization } from '../sandbox/schema';

export const TARGET_SOURCES = ['ground_truth', 'sample', 'repair'] as const;
export type TargetSource = (typeof TARGET_SOURCES)[number];

export interface TrainingTarget {
  code: string;
  source: TargetSource;
  sample: number | null;
  round: number | null;
}

export const SftExampleSchema = z.object({
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).length(3),
  function_id: z.string(),
  repo_name: z.string(),
  func_name: z.string(),
  source: z.enum(TARGET_SOURCES),
  /** -1 for the ground truth: every line has the same column types, as `datasets` wants. */
  sample: z.number().int(),
  round: z.number().int(),
  model: z.string(),
});
export type SftExample = z.infer<typeof SftExampleSchema>;

/**
 * The marker line the prompt renderer puts last in the user message (first in the system message
 * before prompts were laid out for prompt caches) is bookkeeping, not part of what a model learns.
 */
export function trainingMessages(prompt: ChatMessage[]): ChatMessage[] {
  return prompt.map((m) => {
    if (m.role === 'system') return { ...m, content: m.content.replace(/^\[prompt:[^\]\n]*\]\n?/, '') };
    if (m.role === 'user') return { ...m, content: m.content.replace(/\n*^\[prompt:[^\]\n]*\]$(?![\s\S])/m, '') };
    return m;
  });
}

export function answerOf(code: string): string {
  return `\`\`\`python\n${code.replace(/\s+$/, '')}\n\`\`\``;
}

export interface DedupeResult {
  kept: TrainingTarget[];
  duplicates: number;
  unparsable: number;
}

/**
 * Keeps the first target of each normalised form (the ground truth comes first, so a candidate
 * identical to it up to layout is a duplicate); a target Python cannot parse is left out.
 */
export function dedupeTargets(targets: readonly TrainingTarget[], normalized: readonly AstNormalization[]): DedupeResult {
  if (targets.length !== normalized.length) throw new Error('one normalised form per target expected');
  const seen = new Set<string>();
  const kept: TrainingTarget[] = [];
  let duplicates = 0;
  let unparsable = 0;
  targets.forEach((t, i) => {
    const form = normalized[i]!;
    if (!form.ok) {
      unparsable += 1;
      return;
    }
    if (seen.has(form.normalized)) {
      duplicates += 1;
      return;
    }
    seen.add(form.normalized);
    kept.push(t);
  });
  return { kept, duplicates, unparsable };
}

export function sftExamples(
  targets: readonly TrainingTarget[],
  meta: { prompt: ChatMessage[]; functionId: string; repo: string; qualname: string; model: string },
): SftExample[] {
  const prompt = trainingMessages(meta.prompt);
  return targets.map((t) =>
    SftExampleSchema.parse({
      messages: [...prompt, { role: 'assistant', content: answerOf(t.code) }],
      function_id: meta.functionId,
      repo_name: meta.repo,
      func_name: meta.qualname,
      source: t.source,
      sample: t.sample ?? -1,
      round: t.round ?? -1,
      model: t.source === 'ground_truth' ? 'ground_truth' : meta.model,
    }),
  );
}
