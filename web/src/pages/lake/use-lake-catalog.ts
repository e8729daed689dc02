import { useEffect, useRef, useState } from 'preact/hooks';
import { failureMessage } from '../../components/failure-message.js';
import { useVisiblePolling } from '../../components/visible-polling.js';
import { ApiFailure } from '../../http/client.js';
import { loadLakeCatalog, loadLakeStatus } from './lake-api.js';
import type { LakeCatalog } from './lake-api.js';

/** How often dataset statuses are refreshed while the page is visible (loading takes a while). */
const POLL_MS = 5_000;

export type CatalogState =
  | { state: 'loading' }
  | { state: 'loaded'; catalog: LakeCatalog }
  | { state: 'failed'; message: string }
  /** 403 subscription_required: the organization has no Pro plan. */
  | { state: 'pro-required' };

export const isSubscriptionRequired = (err: unknown): boolean =>
  err instanceof ApiFailure && err.code === 'subscription_required';

/** The lake's datasets, views and statuses; the statuses kept fresh while the page is visible. */
export interface LakeCatalogState {
  shown: CatalogState;
  show: (next: CatalogState) => void;
  /** Reads the statuses again now (a query may have started the lake). */
  refreshStatus: () => void;
}

export function useLakeCatalog(enabled: boolean): LakeCatalogState {
  const [shown, setShown] = useState<CatalogState>({ state: 'loading' });
  const polling = useRef(false);
  useEffect(() => {
    if (!enabled) return;
    loadLakeCatalog().then(
      (catalog) => {
        setShown({ state: 'loaded', catalog });
      },
      (err: unknown) => {
        setShown(
          isSubscriptionRequired(err)
            ? { state: 'pro-required' }
            : { state: 'failed', message: failureMessage(err) },
        );
      },
    );
  }, [enabled]);
  const refreshStatus = (): void => {
    if (shown.state !== 'loaded' || polling.current) return;
    polling.current = true;
    loadLakeStatus()
      .then((status) => {
        setShown((current) =>
          current.state === 'loaded' ? { ...current, catalog: { ...current.catalog, status } } : current,
        );
      })
      // A failed refresh keeps the statuses shown; the next tick tries again.
      .catch(() => undefined)
      .finally(() => {
        polling.current = false;
      });
  };
  useVisiblePolling(refreshStatus, POLL_MS);
  return { shown, show: setShown, refreshStatus };
}
