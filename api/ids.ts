import { z } from 'zod';

/** Ids are UUIDs (CONTRACT.md); anything else cannot name a resource, so it is simply not found. */
export const isUuid = (id: string): boolean => z.uuid().safeParse(id).success;
