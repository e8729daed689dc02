import { useState } from 'preact/hooks';
import { failureMessage } from './failure-message.js';

export interface Action {
  /** A request is under way: its button is disabled. */
  busy: boolean;
  /** Why the last one failed (cleared when the next starts). */
  error: string | undefined;
  /** Runs `action`; a failure becomes `error`, worded by `describe` (default failureMessage). */
  run: (action: () => Promise<unknown>, describe?: (err: unknown) => string) => Promise<void>;
}

/** One button's or form's request at a time, with its failure kept to show (sign-in, follow-up, cancel…). */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async (action: () => Promise<unknown>, describe = failureMessage): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
