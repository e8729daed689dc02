// A placeholder: the page is being built (issue 17).
export function WorkspacesPage() {
  return <h1>Workspaces</h1>;
}
