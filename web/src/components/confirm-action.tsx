import { useState } from 'preact/hooks';
import { failureMessage } from './failure-message.js';

export interface ConfirmActionProps {
  /** The button's word ("Hibernate"); its name for assistive technology adds `subject`. */
  label: string;
  /** What the action applies to, named in the question and the button's accessible name. */
  subject: string;
  /** Shown while the request is in flight ("Hibernating…"). */
  busyLabel: string;
  /** Asked before anything is sent ("Hibernate build-box?"). */
  question: string;
  /** Sends the request; a rejection's message is shown beside the button. */
  run: () => Promise<void>;
  danger?: boolean;
}

type Phase = 'idle' | 'asking' | 'running';

/**
 * A button that asks before it acts, is disabled while its request is in flight, and shows the
 * API's error message when it fails. The question is inline, not window.confirm, so it stays part of
 * the page (and of its tests).
 */
export function ConfirmAction({ label, subject, busyLabel, question, run, danger }: ConfirmActionProps) {
  const [phase, setPhase] = useState<Phase>('idle');
  const [error, setError] = useState<string | undefined>(undefined);
  const confirm = async (): Promise<void> => {
    setPhase('running');
    setError(undefined);
    try {
      await run();
    } catch (err) {
      setError(failureMessage(err));
    } finally {
      setPhase('idle');
    }
  };
  const kind = danger === true ? 'danger' : undefined;
  return (
    <span class="confirm-action">
      {phase === 'asking' ? (
        <span role="group" aria-label={question}>
          <span class="question">{question}</span>
          <button type="button" class={kind} onClick={() => void confirm()}>
            Yes, {label.toLowerCase()}
          </button>
          <button
            type="button"
            onClick={() => {
              setPhase('idle');
            }}
          >
            No
          </button>
        </span>
      ) : (
        <button
          type="button"
          class={kind}
          aria-label={`${label} ${subject}`}
          disabled={phase === 'running'}
          onClick={() => {
            setPhase('asking');
          }}
        >
          {phase === 'running' ? busyLabel : label}
        </button>
      )}
      {error !== undefined && (
        <span class="action-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
