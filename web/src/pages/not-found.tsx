// A placeholder: the page is being built (issue 17).
export function NotFoundPage() {
  return <h1>Not found</h1>;
}
