import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../http/client.js';

export interface Loaded<T> {
  value: T | undefined;
  /** Counts the loads that succeeded: tells a value read after some moment from one read before. */
  loads: number;
  /** The last load's failure (the previous value stays shown, if any). */
  error: ApiFailure | undefined;
  /** Loads again (after a change, or to follow a running task); a load still going is dropped. */
  reload: () => void;
}

const asFailure = (err: unknown): ApiFailure =>
  err instanceof ApiFailure ? err : new ApiFailure(0, 'network_error', 'The server could not be reached');

/** Loads a value when mounted and whenever `load` changes (callers memoize it on their inputs). */
export function useLoaded<T>(load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [value, setValue] = useState<{ value: T; loads: number } | undefined>(undefined);
  const [error, setError] = useState<ApiFailure | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const current = useRef<AbortController | undefined>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    current.current?.abort();
    current.current = controller;
    load(controller.signal).then(
      (loaded) => {
        if (controller.signal.aborted) return;
        setValue((previous) => ({ value: loaded, loads: (previous?.loads ?? 0) + 1 }));
        setError(undefined);
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setError(asFailure(err));
      },
    );
    return () => {
      controller.abort();
    };
  }, [load, generation]);
  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
  }, []);
  return { value: value?.value, loads: value?.loads ?? 0, error, reload };
}
