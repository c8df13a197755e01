/**
 * The optional stages a run had switched off, from its frozen pipeline settings: stability
 * (`loops.stability.runs` 0), mutation (`loops.mutation.enabled` false) and solvability (off for
 * both splits). Every function passes an off stage without being checked there, so the views
 * (status, the report's funnel) name it as off instead of as reached. A setting the run did not
 * freeze (a run older than the stage) says nothing.
 */
import { z } from 'zod';
import type { FunctionStage } from '../contracts';

const PipelineSwitchesSchema = z.looseObject({
  stability: z.looseObject({ runs: z.number() }).optional().catch(undefined),
  mutation: z.looseObject({ enabled: z.boolean() }).optional().catch(undefined),
  solvability: z.looseObject({ enabled: z.looseObject({ train: z.boolean(), eval: z.boolean() }) }).optional().catch(undefined),
});

export function stagesOff(pipeline: unknown): FunctionStage[] {
  const parsed = PipelineSwitchesSchema.safeParse(pipeline ?? {});
  if (!parsed.success) return [];
  const p = parsed.data;
  const off: FunctionStage[] = [];
  if (p.stability && p.stability.runs === 0) off.push('stability');
  if (p.mutation && !p.mutation.enabled) off.push('mutation');
  if (p.solvability && !p.solvability.enabled.train && !p.solvability.enabled.eval) off.push('solvability');
  return off;
}
