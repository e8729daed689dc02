import { z } from 'zod';

/** CONTRACT.md §2. GET needs `:read`, mutations `:write`; `*` grants everything. */
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
  '*',
] as const;

export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;

export const hasScope = (granted: readonly Scope[], required: Scope): boolean =>
  granted.includes('*') || granted.includes(required);
