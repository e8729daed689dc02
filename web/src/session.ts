import { signal } from '@preact/signals';
import * as z from 'zod/mini';
import { ApiFailure, request } from './http/client.js';

/** Who is signed in, as GET /ui/session tells it (docs/api.md#web-pages). */
const SessionSchema = z.object({
  organization: z.string(),
  scopes: z.array(z.string()),
  expiresAt: z.string(),
});
export type Session = z.infer<typeof SessionSchema>;

/** undefined: not known yet; null: signed out. */
export const session = signal<Session | null | undefined>(undefined);

export async function loadSession(): Promise<void> {
  try {
    session.value = SessionSchema.parse(await request('GET', '/ui/session'));
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) session.value = null;
    else throw err;
  }
}

export async function signIn(apiKey: string): Promise<void> {
  session.value = SessionSchema.parse(await request('POST', '/ui/session', { body: { apiKey } }));
}

export async function signOut(): Promise<void> {
  await request('DELETE', '/ui/session');
  session.value = null;
}

/** Whether the signed-in key may do this: `*`, or the scope itself (docs/api.md#authentication). */
export function can(scope: string): boolean {
  const scopes = session.value?.scopes ?? [];
  return scopes.includes('*') || scopes.includes(scope);
}
