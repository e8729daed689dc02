import { useState } from 'preact/hooks';
import { ErrorLine } from '../../components/error-line.js';
import { useAction } from '../../components/use-action.js';
import { sendFollowUp } from '../../http/tasks.js';

/** The follow-up box (POST /v1/tasks/:id/prompts): it waits while another prompt runs. */
export function FollowUpForm({ taskId, sent }: { taskId: string; sent: () => void }) {
  const [text, setText] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    await run(async () => {
      await sendFollowUp(taskId, text);
      setText('');
      sent();
    });
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
      <ErrorLine error={error} />
    </form>
  );
}
