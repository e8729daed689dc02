// Bodies assembled from cached JSON text (api/json-text.ts, the task pages) must be byte for byte
// what res.json of the same objects sends.
import { describe, expect, it } from '@jest/globals';
import { fieldAppender, openObjectJson } from '../../api/json-text.js';
import { listEnvelopeJson } from '../../api/pagination.js';

const record = { id: 't1', title: 'quote " and \u2028 and emoji 🙂', prompts: [{ id: 'p', lastSeq: null }] };

describe('JSON text', () => {
  it('appends a field as JSON.stringify of the spread object does', () => {
    const withStatus = fieldAppender('workspaceStatus');
    for (const value of ['ready', null, 'a"b']) {
      expect(withStatus(openObjectJson(record), value)).toBe(
        JSON.stringify({ ...record, workspaceStatus: value }),
      );
    }
  });

  it('serializes a page of item texts as JSON.stringify serializes the page of items', () => {
    const items = [record, { ...record, id: 't2' }];
    const page = { total: 7, limit: 2, offset: 4 };
    expect(listEnvelopeJson({ data: items.map((item) => JSON.stringify(item)), ...page }).text).toBe(
      JSON.stringify({ data: items, ...page }),
    );
    expect(listEnvelopeJson({ data: [], total: 0, limit: 20, offset: 0 }).text).toBe(
      JSON.stringify({ data: [], total: 0, limit: 20, offset: 0 }),
    );
  });
});
