/** The activity side of the retry probe: one gateway call, errors mapped as the real activities map them. */
import { LlmGateway, renderPrompt } from '../../../activities/llm';
import { toActivityFailure } from '../../../activities/llm/failures';

export interface RetryProbeActivities {
  askOnce(functionId: string): Promise<string>;
}

export function createRetryProbeActivities(gateway: LlmGateway): RetryProbeActivities {
  return {
    async askOnce(functionId) {
      const prompt = renderPrompt('docstring', { functionName: 'f', code: 'def f():\n    return 1\n' });
      try {
        const out = await gateway.chat({ step: 'docstring', functionId, messages: prompt.messages, promptId: prompt.promptId, promptVersion: prompt.promptVersion });
        return out.text;
      } catch (err) {
        throw toActivityFailure(err);
      }
    },
  };
}
