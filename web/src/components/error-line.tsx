/** A failure to show beside what caused it, announced to screen readers. */
export function ErrorLine({ error }: { error: string | undefined }) {
  if (error === undefined) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}
