/**
 * Token counts for the dataset's statistics, with a real byte-pair encoding: `o200k_base`, the
 * tokenizer of GPT-4o, the model RepoST built its datasets with (the paper does not name the
 * tokenizer behind its Table 4). Counts therefore compare with the paper's only roughly, but they
 * are exact for GPT-4o-family prompts and stable across runs. The ranks (2 MB) load on first use.
 */
import type { Tiktoken } from 'js-tiktoken/lite';

export const STATISTICS_TOKENIZER = 'o200k_base';

let encoder: Tiktoken | null = null;

function load(): Tiktoken {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { Tiktoken: Encoder } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
  const ranks = require('js-tiktoken/ranks/o200k_base') as { default?: ConstructorParameters<typeof Encoder>[0] } & ConstructorParameters<typeof Encoder>[0];
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new Encoder(ranks.default ?? ranks);
}

/** Number of o200k_base tokens of `text` (special-token look-alikes count as plain text). */
export function countBpeTokens(text: string): number {
  if (text === '') return 0;
  encoder ??= load();
  return encoder.encode(text, [], []).length;
}
