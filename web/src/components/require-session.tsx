import type { ComponentChildren } from 'preact';
import { session } from '../session.js';

/**
 * Shows its children to a signed-in reader only: nothing is fetched before the session is known,
 * and a signed-out reader sees nothing while SessionGuard (web/src/session-guard.tsx) sends them
 * to the sign-in page.
 */
export function RequireSession({ children }: { children: ComponentChildren }) {
  if (session.value === undefined) return <p class="loading">Loading…</p>;
  if (session.value === null) return null;
  return <>{children}</>;
}
