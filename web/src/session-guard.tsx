import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { session } from './session.js';

/** Pages anyone may open: the sign-in page, and a share link's page (its reader has no key). */
const isPublicPage = (path: string): boolean => path === '/login' || path.startsWith('/share/');

/** A path of this site to return to after sign-in; anything else (another origin, `//host`) is ignored. */
export function localPath(next: string | undefined): string | undefined {
  return next !== undefined && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\')
    ? next
    : undefined;
}

/** Sends a signed-out reader of a page that needs a session to /login, to come back after. */
export function SessionGuard() {
  const { path, url, route } = useLocation();
  const current = session.value;
  useEffect(() => {
    if (current === null && !isPublicPage(path)) route(`/login?next=${encodeURIComponent(url)}`, true);
  }, [current, path, url, route]);
  return null;
}
