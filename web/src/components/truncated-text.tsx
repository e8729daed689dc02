/** Longer text shows this many characters (or lines) until the reader asks for the rest. */
const MAX_CHARS = 2000;
const MAX_LINES = 30;

/** Where to cut `text` for its short form, or undefined when it is short enough whole. */
function cutAt(text: string): number | undefined {
  let cut = text.length > MAX_CHARS ? MAX_CHARS : undefined;
  let newlines = 0;
  for (let i = 0; i < Math.min(text.length, MAX_CHARS); i += 1) {
    if (text.charCodeAt(i) === 10 && ++newlines === MAX_LINES) {
      cut = i;
      break;
    }
  }
  return cut;
}

/**
 * Untrusted text (an agent's output, a tool's result) as preformatted text: Preact sets it as a text
 * node, never as HTML. Long text is cut, with "show more"; the caller keeps whether it is expanded,
 * so a row scrolled out of a virtual list and back keeps its state.
 */
export function TruncatedText(props: {
  text: string;
  expanded: boolean;
  onExpand: () => void;
  class?: string;
}) {
  const cut = props.expanded ? undefined : cutAt(props.text);
  return (
    <div class={props.class}>
      <pre>{cut === undefined ? props.text : props.text.slice(0, cut)}</pre>
      {cut !== undefined && (
        <button type="button" class="link" onClick={props.onExpand}>
          Show more ({(props.text.length - cut).toLocaleString()} more characters)
        </button>
      )}
    </div>
  );
}
