import { describe, expect, it } from '@jest/globals';
import { MAX_EGRESS_DENIALS } from '../../crds/egress.js';
import { mergeDenials } from '../../egress/denial-ledger.js';

const at = (minute: number): string => `2026-11-25T10:${String(minute).padStart(2, '0')}:00.000Z`;
const denial = (host: string, count: number, first: number, last: number) => ({
  host,
  port: 443,
  reason: 'not_allowed' as const,
  firstAt: at(first),
  lastAt: at(last),
  count,
});

describe('mergeDenials', () => {
  it('adds counts of the same host, port and reason, keeping the first time and the latest', () => {
    expect(mergeDenials([denial('a.test', 2, 1, 2)], [denial('a.test', 3, 5, 7)])).toEqual([
      denial('a.test', 5, 1, 7),
    ]);
  });

  it('keeps different reasons or ports apart', () => {
    const other = { ...denial('a.test', 1, 3, 3), reason: 'sni_mismatch' as const };
    expect(mergeDenials([denial('a.test', 1, 1, 1)], [other])).toHaveLength(2);
  });

  it(`stops adding new entries at ${MAX_EGRESS_DENIALS}, while counts of known ones still grow`, () => {
    const full = Array.from({ length: MAX_EGRESS_DENIALS }, (_, i) => denial(`h${i}.test`, 1, 1, 1));
    const merged = mergeDenials(full, [denial('new.test', 1, 2, 2), denial('h0.test', 4, 2, 2)]);
    expect(merged).toHaveLength(MAX_EGRESS_DENIALS);
    expect(merged.find((entry) => entry.host === 'new.test')).toBeUndefined();
    expect(merged[0]?.count).toBe(5);
  });
});
