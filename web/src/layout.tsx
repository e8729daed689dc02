import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { session, signOut } from './session.js';

/** The header on every page; the share page shows no navigation (its reader has no session). */
export function Layout({ children }: { children: ComponentChildren }) {
  const { path, route } = useLocation();
  const shared = path.startsWith('/share/');
  const current = session.value;
  return (
    <>
      <header class="top">
        <a class="brand" href={shared ? undefined : '/'}>
          Agentry
        </a>
        {!shared && current && (
          <nav>
            <a href="/" aria-current={path === '/' ? 'page' : undefined}>
              Tasks
            </a>
            <a href="/workspaces" aria-current={path === '/workspaces' ? 'page' : undefined}>
              Workspaces
            </a>
            <a href="/lake" aria-current={path === '/lake' ? 'page' : undefined}>
              Lake
            </a>
            <span class="org">{current.organization}</span>
            <button
              type="button"
              onClick={() => {
                void signOut().then(() => {
                  route('/login');
                });
              }}
            >
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main>{children}</main>
    </>
  );
}
