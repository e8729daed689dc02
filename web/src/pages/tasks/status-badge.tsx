/** A task's or prompt's status as a badge (the class colors it; the word says it). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status}</span>;
}
