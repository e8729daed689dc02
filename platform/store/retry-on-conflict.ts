import { isStoreError } from './types.js';

/** Tries of a read-modify-write before a run of conflicting writers wins. */
export const DEFAULT_CONFLICT_ATTEMPTS = 5;

/**
 * Runs `attempt` (a read-modify-write whose write carries the resourceVersion it read) again from
 * the start while it fails with Conflict (another writer came first), at most `attempts` times in
 * all, like client-go's RetryOnConflict; then the last Conflict is thrown. Any other error is
 * thrown at once. `attempt` is told which try it is (1, 2, …).
 */
export async function retryOnConflict<T>(
  attempt: (tryNumber: number) => Promise<T>,
  attempts: number = DEFAULT_CONFLICT_ATTEMPTS,
): Promise<T> {
  for (let tryNumber = 1; ; tryNumber++) {
    try {
      return await attempt(tryNumber);
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || tryNumber >= attempts) throw err;
    }
  }
}
