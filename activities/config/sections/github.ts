/** The `github` section of the configuration. Where GitHub is, and the credentials to use it. */
import { z } from 'zod';
import { PER_PROCESS } from '../shapes';

export const GithubSection = z
  .object({
    /** The GitHub API (a GitHub Enterprise server's, or a local stand-in). */
    baseUrl: z.string().url().default('https://api.github.com'),
    /** A GitHub token for the search and downloads (higher rate limits). */
    token: z.string().optional(),
  })
  .prefault({})
  .meta(PER_PROCESS);
