/** The `analysis` section of the configuration. The static analysis's candidate filters and context limits: a part of the analysis options' own schema. */
import { AnalysisOptionsSchema } from '../../analysis/types';
import { nonNegativeInt, perSplit } from '../shapes';

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
  contextClosure: true,
  closureDepth: true,
  maxFileBytes: true,
})
  .extend({
    /** Token budget of the context text for a target of each split; 0 = unlimited (`analysis.preset=repost`: 6000 for training, 8000 for evaluation). */
    contextTokenBudget: perSplit(nonNegativeInt, { train: 8000, eval: 8000 }),
  })
  .prefault({});
