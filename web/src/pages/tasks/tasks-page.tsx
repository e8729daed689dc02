// A placeholder: the page is being built (issue 17).
export function TasksPage() {
  return <h1>Tasks</h1>;
}
