/**
 * A rough token count (about four characters per token for English and code). Used where the
 * real count is not known yet: budgeting the rate limiter before a call, and filling in usage
 * when an endpoint does not report it.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateMessagesTokens(messages: readonly { content: string }[]): number {
  // A few tokens of framing per message, as chat formats add role markers.
  return messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
}
