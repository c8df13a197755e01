/**
 * Reviewing an answer: whether the factory can use it and, when not, which checks refused it. A
 * code answer is parsed and its script given to the step's sanity check; a verdict is parsed. The
 * LLM activities hand the review to the gateway (`chat(req, { review })`), which records the
 * refusing checks on the exchange and its index entry (`refusedBy`), so a run can show what each
 * rule costs (`activities/store/refusals.ts`).
 */
import { parseCodeAnswer, parseVerdict, type VerdictAnswer } from './parsers';

/** An answer as the gateway hands it to a review. */
export interface ReviewedAnswer {
  text: string;
  finishReason: string | null;
}

/** A code answer as reviewed: its script (and bash), or why it cannot be used and which checks refused it. */
export type CodeReview =
  | { ok: true; code: string; bash: string | null; refusedBy: string[] }
  | { ok: false; failure: string; detail: string; refusedBy: string[] };

/** A verdict as reviewed: the parse, and the check that refused it (`parse_<failure>`) when it failed. */
export type VerdictReview = ReturnType<typeof parseVerdict> & { refusedBy: string[] };

/** Parses a code answer and runs the step's sanity check on its script. */
export function reviewCode(
  answer: ReviewedAnswer,
  check: (script: string) => { passed: boolean; failures: { check: string; detail: string }[] } | null,
): CodeReview {
  const parsed = parseCodeAnswer(answer.text, answer.finishReason);
  if (!parsed.ok) return { ok: false, failure: `parse_${parsed.failure}`, detail: parsed.detail, refusedBy: [`parse_${parsed.failure}`] };
  const report = check(parsed.code);
  if (report && !report.passed) {
    const detail = report.failures.map((f) => `${f.check}: ${f.detail}`).join('; ');
    return { ok: false, failure: 'sanity_check', detail, refusedBy: report.failures.map((f) => f.check) };
  }
  return { ok: true, code: parsed.code, bash: parsed.bash, refusedBy: [] };
}

/** Parses a verdict among the allowed answers. */
export function reviewVerdict(answer: ReviewedAnswer, allowed: readonly VerdictAnswer[]): VerdictReview {
  const v = parseVerdict(answer.text, allowed, answer.finishReason);
  return { ...v, refusedBy: v.ok ? [] : [`parse_${v.failure}`] };
}
