import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { failureMessage } from '../../components/failure-message.js';
import { useVisiblePolling } from '../../components/visible-polling.js';
import { listWorkspaces } from './workspace-api.js';
import type { Workspace, WorkspacePage } from './workspace-api.js';

/** How often the shown statuses are refreshed while the page is visible. */
const POLL_MS = 3_000;

export interface WorkspaceList {
  page: WorkspacePage | undefined;
  /** Why the latest load failed (the page shown stays). */
  error: string | undefined;
  /** Runs an action's request: polling pauses meanwhile and lists asked before it are dropped. */
  track: <T>(request: Promise<T>) => Promise<T>;
  replace: (changed: Workspace) => void;
  remove: (id: string) => void;
}

/**
 * One page of the organization's workspaces, kept fresh by polling while the page is visible and
 * nothing is in flight. A list asked before a change and answered after it is dropped (`version`),
 * so a stale answer never undoes what an action just showed.
 */
export function useWorkspaces(offset: number): WorkspaceList {
  const [page, setPage] = useState<WorkspacePage | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const inFlight = useRef(0);
  const version = useRef(0);

  const load = useCallback(async (at: number): Promise<void> => {
    const asked = version.current;
    inFlight.current += 1;
    try {
      const answer = await listWorkspaces(at);
      if (version.current !== asked) return;
      setPage(answer);
      setError(undefined);
    } catch (err) {
      if (version.current === asked) setError(failureMessage(err));
    } finally {
      inFlight.current -= 1;
    }
  }, []);

  useEffect(() => {
    void load(offset);
  }, [load, offset]);
  useVisiblePolling(() => {
    if (inFlight.current === 0) void load(offset);
  }, POLL_MS);

  const track = useCallback(async <T>(request: Promise<T>): Promise<T> => {
    version.current += 1;
    inFlight.current += 1;
    try {
      return await request;
    } finally {
      inFlight.current -= 1;
    }
  }, []);
  const replace = (changed: Workspace): void => {
    setPage(
      (shown) => shown && { ...shown, data: shown.data.map((w) => (w.id === changed.id ? changed : w)) },
    );
  };
  const remove = (id: string): void => {
    setPage(
      (shown) => shown && { ...shown, data: shown.data.filter((w) => w.id !== id), total: shown.total - 1 },
    );
    void load(offset);
  };
  return { page, error, track, replace, remove };
}
