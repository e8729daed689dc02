import { useEffect } from 'preact/hooks';

/** Calls `refresh` every `ms` while `active` (a page following something that is still running). */
export function useRefreshWhile(active: boolean, refresh: () => void, ms: number): void {
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(refresh, ms);
    return () => {
      clearInterval(timer);
    };
  }, [active, refresh, ms]);
}
