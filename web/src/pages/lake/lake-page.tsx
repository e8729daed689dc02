import { can, session } from '../../session.js';
import { LakeCatalogTables } from './lake-catalog.js';
import { SqlConsole } from './sql-console.js';
import { useLakeCatalog } from './use-lake-catalog.js';
import type { CatalogState } from './use-lake-catalog.js';
import '../../components/admin-controls.css';
import './lake.css';

function ProPlanNeeded() {
  return (
    <p class="pro-required" role="alert">
      The context lake needs the Pro plan. An installation administrator can set the organization’s plan to{' '}
      <code>pro</code> (<code>agentry orgs</code> or PATCH /v1/admin/organizations/:name).
    </p>
  );
}

function Catalog({ shown }: { shown: CatalogState }) {
  switch (shown.state) {
    case 'loading':
      return <p class="muted">Loading…</p>;
    case 'failed':
      return <p role="alert">{shown.message}</p>;
    case 'pro-required':
      return null;
    case 'loaded':
      return <LakeCatalogTables catalog={shown.catalog} />;
  }
}

/** The lake console for a signed-in key; what it shows follows the key's context-lake scopes. */
function LakeConsole() {
  const canRead = can('context-lake:read');
  const canQuery = can('context-lake:sql');
  const { shown, show, refreshStatus } = useLakeCatalog(canRead);
  if (shown.state === 'pro-required') return <ProPlanNeeded />;
  if (!canRead && !canQuery) return <p>This API key may not use the lake (it has no context-lake scope).</p>;
  return (
    <>
      {canRead && <Catalog shown={shown} />}
      {canQuery && (
        <SqlConsole
          onSubscriptionRequired={() => {
            show({ state: 'pro-required' });
          }}
          onAnswered={refreshStatus}
        />
      )}
    </>
  );
}

/** /lake: datasets and views with their status, and a SQL box (docs/api.md#context-lake). */
export function LakePage() {
  const current = session.value;
  if (current === undefined) return <p class="muted">Loading…</p>;
  // Signed out: the app's SessionGuard sends the reader to /login and back.
  if (current === null) return null;
  return (
    <section class="admin-page lake-page">
      <h1>Context lake</h1>
      <LakeConsole />
    </section>
  );
}
