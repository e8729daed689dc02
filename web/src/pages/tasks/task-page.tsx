// A placeholder: the page is being built (issue 17).
export function TaskPage() {
  return <h1>Task</h1>;
}
