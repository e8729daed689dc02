import { describe, expect, it } from '@jest/globals';
import { AGENTRY_EVENT_CATALOGS, defineEvents, eventsMarkdown } from '../../crds/index.js';
import type { EventDocs } from '../../crds/index.js';

describe('Kubernetes Event reasons', () => {
  it('gives a reason named by several kinds the same type everywhere', () => {
    const typeOf = new Map<string, string>();
    for (const catalog of AGENTRY_EVENT_CATALOGS) {
      const docs: EventDocs = catalog.docs;
      for (const [reason, { type }] of Object.entries(docs)) {
        expect(`${reason}: ${typeOf.get(reason) ?? type}`).toBe(`${reason}: ${type}`);
        typeOf.set(reason, type);
      }
    }
  });

  it('documents every reason with its type in one list per kind', () => {
    const catalog = defineEvents('Thing', {
      Started: { type: 'Normal', doc: 'it started' },
      Broke: { type: 'Warning', doc: 'it broke' },
    });
    expect(catalog.reasons.Broke).toBe('Broke');
    const page = eventsMarkdown([catalog]);
    expect(page).toContain('## Thing events');
    expect(page).toContain('- `Started` (Normal): it started');
    expect(page).toContain('- `Broke` (Warning): it broke');
  });
});
