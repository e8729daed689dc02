import { useState } from 'preact/hooks';
import { ApiFailure } from '../../http/client.js';
import { sendFollowUp } from '../../http/tasks.js';

/** The follow-up box (POST /v1/tasks/:id/prompts): it waits while another prompt runs. */
export function FollowUpForm({ taskId, sent }: { taskId: string; sent: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await sendFollowUp(taskId, text);
      setText('');
      sent();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : 'The server could not be reached.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="follow-up" onSubmit={(event) => void submit(event)}>
      <label for="follow-up">Follow-up</label>
      <textarea
        id="follow-up"
        rows={3}
        required
        maxLength={100_000}
        value={text}
        onInput={(event) => {
          setText(event.currentTarget.value);
        }}
      />
      <button type="submit" disabled={busy || text.trim() === ''}>
        {busy ? 'Sending…' : 'Send'}
      </button>
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
