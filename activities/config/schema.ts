/**
 * The configuration's schema: the data directory and one section a file (sections/). A key marked
 * `perProcess` belongs to the process that reads it; every other key is a run setting.
 */
import { z } from 'zod';
import { AnalysisSection } from './sections/analysis';
import { CrawlSection } from './sections/crawl';
import { GithubSection } from './sections/github';
import { LlmSection } from './sections/llm';
import { LoopsSection } from './sections/loops';
import { SandboxSection } from './sections/sandbox';
import { StoreSection } from './sections/store';
import { TemporalSection } from './sections/temporal';
import { WorkersSection } from './sections/workers';
import { PER_PROCESS } from './shapes';

export const ConfigSchema = z.object({
  /** Where runs, artifacts, caches and the embedded Temporal database live. */
  dataDir: z.string().min(1).default('.data').meta(PER_PROCESS),
  store: StoreSection,
  temporal: TemporalSection,
  workers: WorkersSection,
  llm: LlmSection,
  sandbox: SandboxSection,
  loops: LoopsSection,
  /** Candidate filters (each rule can be switched off) and context limits of the static analysis. */
  analysis: AnalysisSection,
  crawl: CrawlSection,
  /** Where GitHub is, and the credentials to use it. */
  github: GithubSection,
});

export type Config = z.infer<typeof ConfigSchema>;
