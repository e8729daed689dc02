import { ErrorBoundary, LocationProvider, Route, Router, lazy } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { Layout } from './layout.js';
import { loadSession } from './session.js';
import { SessionGuard } from './session-guard.js';

// One chunk per page: the share page (opened by people without a key) loads only what it shows.
const TasksPage = lazy(() => import('./pages/tasks/tasks-page.js').then((m) => m.TasksPage));
const TaskPage = lazy(() => import('./pages/tasks/task-page.js').then((m) => m.TaskPage));
const SharePage = lazy(() => import('./pages/share/share-page.js').then((m) => m.SharePage));
const WorkspacesPage = lazy(() =>
  import('./pages/workspaces/workspaces-page.js').then((m) => m.WorkspacesPage),
);
const LakePage = lazy(() => import('./pages/lake/lake-page.js').then((m) => m.LakePage));
const SignInPage = lazy(() => import('./pages/sign-in/sign-in-page.js').then((m) => m.SignInPage));
const NotFoundPage = lazy(() => import('./pages/not-found.js').then((m) => m.NotFoundPage));

/** The routes the server answers with this app (api/web/pages.ts keeps the same list). */
export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  return (
    <LocationProvider>
      <SessionGuard />
      <ErrorBoundary>
        <Layout>
          <Router>
            <Route path="/" component={TasksPage} />
            <Route path="/tasks/:id" component={TaskPage} />
            <Route path="/share/:token" component={SharePage} />
            <Route path="/workspaces" component={WorkspacesPage} />
            <Route path="/lake" component={LakePage} />
            <Route path="/login" component={SignInPage} />
            <Route default component={NotFoundPage} />
          </Router>
        </Layout>
      </ErrorBoundary>
    </LocationProvider>
  );
}
