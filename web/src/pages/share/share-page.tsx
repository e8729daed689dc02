// A placeholder: the page is being built (issue 17).
export function SharePage() {
  return <h1>Shared task</h1>;
}
