/** The `analysis` section of the configuration. The static analysis's candidate filters and context limits: a part of the analysis options' own schema. */
import { AnalysisOptionsSchema } from '../../analysis/types';

export const AnalysisSection = AnalysisOptionsSchema.pick({
  preset: true,
  rules: true,
  minLines: true,
  maxLines: true,
  classRules: true,
  minClassMethods: true,
  maxClassMethods: true,
  minClassLines: true,
  maxClassLines: true,
  extraKeywords: true,
  contextTokenBudget: true,
  contextClosure: true,
  closureDepth: true,
  maxFileBytes: true,
}).prefault({});
