import '../tasks/tasks.css';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure } from '../../http/client.js';
import { ErrorLine } from '../../components/error-line.js';
import { failureMessage } from '../../components/failure-message.js';
import { useAction } from '../../components/use-action.js';
import { localPath } from '../../session-guard.js';
import { signIn } from '../../session.js';

function failureText(err: unknown): string {
  if (err instanceof ApiFailure && err.status === 401)
    return 'That key is not valid: it is wrong, revoked or expired.';
  return failureMessage(err);
}

/**
 * Sign-in: the API key is sent once to POST /ui/session, which answers with an HttpOnly session
 * cookie; the page never stores the key (docs/api.md#web-pages).
 */
export function SignInPage() {
  const { query, route } = useLocation();
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    await run(async () => {
      await signIn(key.trim());
      setKey('');
      route(localPath(query.next) ?? '/', true);
    }, failureText);
  };
  return (
    <section class="sign-in">
      <h1>Sign in</h1>
      <p>Enter an API key of your organization. The page keeps a session cookie, never the key.</p>
      <form onSubmit={(event) => void submit(event)}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autocomplete="off"
          placeholder="agk_…"
          required
          value={key}
          onInput={(event) => {
            setKey(event.currentTarget.value);
          }}
        />
        <button type="submit" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorLine error={error} />
      </form>
    </section>
  );
}
