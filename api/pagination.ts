import { z } from 'zod';
import type { KubeObject } from '../crds/index.js';
import { JsonText } from './json-text.js';
import type { IndexedInformer } from './list-index.js';

/** docs/api.md conventions: `limit` 1..100 (default 50) and `offset` ≥ 0 (default 0). */
export const PaginationQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('The page size'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('How many items to skip'),
});
export type PaginationQuery = z.infer<typeof PaginationQuerySchema>;

export const listEnvelopeSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  });

export interface ListEnvelope<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

export function paginate<T, R>(
  items: readonly T[],
  page: PaginationQuery,
  present: (item: T) => R,
): ListEnvelope<R> {
  return {
    data: items.slice(page.offset, page.offset + page.limit).map(present),
    total: items.length,
    limit: page.limit,
    offset: page.offset,
  };
}

/**
 * One page of an indexed list (ListIndex): the names come from the index in order, the objects
 * from the cache; `total` is the lists' size. Costs O(log n + limit), never a scan or a sort.
 */
export function indexedPage<T extends KubeObject, R>(
  informer: IndexedInformer<T>,
  namespace: string,
  buckets: readonly [string] | readonly [string, string],
  page: PaginationQuery,
  present: (item: T) => R,
): ListEnvelope<R> {
  const names = informer.index.page(buckets, page.offset, page.limit);
  const data: R[] = [];
  for (const name of names) {
    const item = informer.get(namespace, name);
    if (item !== undefined) data.push(present(item));
  }
  const total = buckets.reduce((sum, bucket) => sum + informer.index.size(bucket), 0);
  return { data, total, limit: page.limit, offset: page.offset };
}

/** The JSON text of a page whose items are JSON texts already: what `JSON.stringify` of the page gives. */
export const listEnvelopeJson = (page: ListEnvelope<string>): JsonText =>
  new JsonText(
    `{"data":[${page.data.join(',')}],"total":${String(page.total)},"limit":${String(page.limit)},"offset":${String(page.offset)}}`,
  );
