/** What a page shows a reader without a session: where to sign in. */
export function SignInNeeded({ what }: { what: string }) {
  return (
    <p>
      <a href="/login">Sign in</a> with an API key to {what}.
    </p>
  );
}
