import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure } from '../../http/client.js';
import { signIn } from '../../session.js';
import { localPath } from '../../session-guard.js';

/**
 * Sign-in: the API key is sent once to POST /ui/session, which answers with an HttpOnly cookie;
 * the key is never stored by the page. Labels are what the browser tests look for.
 */
export function SignInPage() {
  const { query, route } = useLocation();
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(apiKey);
      setApiKey('');
      route(localPath(query.next) ?? '/');
    } catch (err) {
      setError(
        err instanceof ApiFailure && err.status === 401 ? 'That API key is not valid.' : 'Signing in failed.',
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          required
          value={apiKey}
          onInput={(event) => {
            setApiKey(event.currentTarget.value);
          }}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error !== undefined && <p role="alert">{error}</p>}
      </form>
    </section>
  );
}
