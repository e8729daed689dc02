// A placeholder: the page is being built (issue 17).
export function LakePage() {
  return <h1>Context lake</h1>;
}
