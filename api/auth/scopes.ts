import { z } from 'zod';

/**
 * docs/api.md#authentication. GET needs `:read`, mutations `:write`; `*` grants everything in the key's own
 * organization. `installation:admin` (the /v1/admin routes, which act on every organization) is
 * the exception: `*` does not grant it, only a key created with it by name does, and keys are
 * created only by `agentry keys create`, i.e. by whoever administers the installation itself.
 */
export const SCOPES = [
  'tasks:read',
  'tasks:write',
  'agent-computers:read',
  'agent-computers:write',
  'files:write',
  'artifacts:read',
  'artifacts:write',
  'webhooks:read',
  'webhooks:write',
  'context-lake:read',
  'context-lake:write',
  'context-lake:sql',
  'context-lake:admin',
  'installation:admin',
  '*',
] as const;

export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;

/** Scopes `*` does not imply: they reach beyond the key's organization. */
const EXPLICIT_ONLY: readonly Scope[] = ['installation:admin'];

export const hasScope = (granted: readonly Scope[], required: Scope): boolean =>
  granted.includes(required) || (granted.includes('*') && !EXPLICIT_ONLY.includes(required));
