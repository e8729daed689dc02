/**
 * Where an organization's uploaded file lives (POST /files writes it, the operator reads it). The
 * namespace is the key's prefix, so a file id of another organization names nothing in the caller's.
 */
export const uploadedFileKey = (namespace: string, id: string): string => `orgs/${namespace}/files/${id}`;
