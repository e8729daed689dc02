import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `tick` every `intervalMs` while the page is visible, and once at once when it becomes
 * visible again: a hidden tab asks the server nothing. `tick` decides itself whether to skip (a
 * request still in flight); the latest `tick` is called, so it may close over fresh state.
 */
export function useVisiblePolling(tick: () => void, intervalMs: number): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    const visible = (): boolean => document.visibilityState === 'visible';
    const timer = setInterval(() => {
      if (visible()) latest.current();
    }, intervalMs);
    const onVisibility = (): void => {
      if (visible()) latest.current();
    };
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [intervalMs]);
}
