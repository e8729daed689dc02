/** A task's or prompt's status as a badge (the class colors it; the word says it). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status}</span>;
}

/** A timestamp in the reader's locale, with the exact ISO time on hover. */
export function Time({ iso }: { iso: string | null }) {
  if (iso === null) return <span>—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {new Date(iso).toLocaleString()}
    </time>
  );
}
