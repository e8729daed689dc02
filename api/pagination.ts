import { z } from 'zod';
import type { KubeObject } from '../crds/index.js';

/** CONTRACT.md conventions: `limit` 1..100 (default 50) and `offset` ≥ 0 (default 0). */
export const PaginationQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
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

/** Newest first; objects created in the same second are ordered by name so pages are stable. */
export function newestFirst(a: KubeObject, b: KubeObject): number {
  const byTime = (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '');
  return byTime !== 0 ? byTime : a.metadata.name.localeCompare(b.metadata.name);
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
