/** The `loops` section of the configuration. The pipeline's rounds and the thresholds a record must reach: debug and coverage rounds, test strength (stability, mutation), solvability, sanity checks. */
import { z } from 'zod';
import { fraction, nonNegativeInt, positiveInt } from '../shapes';

export const LoopsSection = z
  .object({
    /** k: debug rounds after a failing execution. */
    debugRounds: nonNegativeInt.default(3),
    /** Rounds asking for more tests when branch coverage is below the threshold. */
    coverageRounds: nonNegativeInt.default(2),
    /** Branch coverage a training record must reach (RepoST: 0.8). */
    coverageThreshold: fraction.default(0.8),
    /** Branch coverage an evaluation record must reach (RepoST: 1.0). */
    evalCoverageThreshold: fraction.default(1),
    /** Evaluation records need the sandboxed function's AST to equal the original's (RepoST). */
    evalRequiresAstMatch: z.boolean().default(true),
    /** Regenerations after an output that failed to parse or a failed sanity check. */
    regenerateAttempts: nonNegativeInt.default(2),
    /**
     * Test strength after the coverage rounds: the mutation score of the record's tests (the
     * share of wrong implementations, made from the target by small changes, that they reject).
     * Off by default; when on, every record carries its score, and a record below its split's
     * minimum goes through mutation rounds (tests asked for that tell the surviving mutants
     * apart), then is rejected at stage `mutation` if still below.
     */
    mutation: z
      .object({
        enabled: z.boolean().default(false),
        /** Score a training record must reach (0: scored, never rejected). */
        minScore: fraction.default(0),
        /** Score an evaluation record must reach. */
        evalMinScore: fraction.default(0),
        /** Rounds asking for tests that kill the surviving mutants. */
        rounds: nonNegativeInt.default(1),
        /** Mutants per function at most (sampled with `seed`). */
        cap: positiveInt.max(500).default(30),
        seed: nonNegativeInt.default(0),
      })
      .prefault({}),
    /**
     * Stability: the script run with the ground truth `runs` times (each with another
     * PYTHONHASHSEED, run folder and clock); a record whose outcome or coverage differs is flaky.
     * 0: off.
     */
    stability: z
      .object({
        runs: z.number().int().min(0).max(10).refine((n) => n !== 1, 'a stability check compares at least 2 runs (0: off)').default(0),
        /** Keep a flaky record, labelled `stability: flaky`, instead of rejecting it at stage `stability`. */
        keepFlaky: z.boolean().default(false),
      })
      .prefault({}),
    /**
     * The solvability stage, after the final checks: can a model implement the function from
     * what its prompt shows? `k` implementations from the evaluation's `solve` prompt; when none
     * passes, each failing assertion is judged (the `check_assertion` prompt, the `check` model),
     * and one on behaviour the prompt does not determine is removed (or the record rejected).
     */
    solvability: z
      .object({
        /** Per split: evaluation records are checked, training records are not. */
        enabled: z.object({ train: z.boolean().default(false), eval: z.boolean().default(true) }).prefault({}),
        /** Independent implementations asked from the prompt alone. */
        k: positiveInt.max(20).default(3),
        /** The model that writes them; unset = the `solve` step's model (`llm.models.solve`, else `llm.model`). */
        model: z.string().min(1).optional(),
        /** Their sampling temperature: above 0, so the k answers are independent tries. */
        temperature: z.number().min(0).max(2).default(0.8),
        /** A function without a docstring gets one written from the ground truth (the `docstring` prompt); false: its record is left out of the split. */
        generateDocstrings: z.boolean().default(true),
        /** An assertion on behaviour the prompt does not determine is removed (the script is run again); false: it rejects the record. */
        removeUndetermined: z.boolean().default(true),
        /** Rounds of judging failing assertions while no implementation passes. */
        rounds: positiveInt.max(5).default(2),
      })
      .prefault({}),
    /** How the sanity checks read an answer. */
    sanity: z
      .object({
        /**
         * How the test function must reach `f` and `f_new_implementation`: `literal` (RepoST's
         * rule): its own text calls both; `reachable`: it reaches a call of each through the
         * script's own functions (a helper it hands them to, a loop over the two).
         */
        testCalls: z.enum(['literal', 'reachable']).default('literal'),
      })
      .prefault({}),
  })
  .prefault({});
