// A placeholder: the page is being built (issue 17).
export function SignInPage() {
  return <h1>Sign in</h1>;
}
