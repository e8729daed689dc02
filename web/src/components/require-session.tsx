import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { session } from '../session.js';

/** The sign-in page's address that comes back here once signed in. */
export const signInPath = (back: string): string => `/login?next=${encodeURIComponent(back)}`;

/** Shows its children to a signed-in reader; sends anyone else to the sign-in page and back. */
export function RequireSession({ children }: { children: ComponentChildren }) {
  const { url, route } = useLocation();
  const signedOut = session.value === null;
  useEffect(() => {
    // The router keeps this page mounted while the sign-in page loads: by then `url` is the latter's.
    if (signedOut && !url.startsWith('/login')) route(signInPath(url), true);
  }, [signedOut, url, route]);
  if (session.value === undefined) return <p class="loading">Loading…</p>;
  if (session.value === null) return null;
  return <>{children}</>;
}
