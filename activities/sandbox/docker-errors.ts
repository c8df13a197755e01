/**
 * Failures of the Docker engine itself, as opposed to a script's: the socket is missing or
 * refuses connections (the daemon is restarting), the engine answers 5xx, or a container the
 * executor holds has vanished or stopped (the daemon restarted and took it along). Runs that hit
 * one are `infrastructure` results, which the activity turns into a retryable failure.
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);

export function isDockerUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: string; statusCode?: number; message?: string; reason?: string };
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if (typeof e.statusCode === 'number') {
    if (e.statusCode >= 500) return true;
    // 404: the container is gone; 409: it is not running (both after a daemon restart).
    if (e.statusCode === 404 || e.statusCode === 409) return true;
  }
  return /socket hang up|connect ENOENT|connect ECONNREFUSED|is not running|No such container|container .* is (?:restarting|paused)/i.test(e.message ?? '');
}
