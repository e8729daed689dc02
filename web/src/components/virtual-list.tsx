import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';

/** How far beyond the visible part rows are kept in the DOM, in pixels, above and below. */
const OVERSCAN_PX = 800;
/** Within this distance of the bottom the list counts as following and stays at the end as rows come. */
const FOLLOW_SLACK_PX = 48;

export interface VirtualListProps<T> {
  items: readonly T[];
  keyOf: (item: T) => string;
  /** A row's height before it was measured (then its measured height counts). */
  estimate: (item: T) => number;
  renderItem: (item: T) => ComponentChildren;
  /** Keep the end in view as items are added while the reader is at the end. */
  follow?: boolean;
  class?: string;
  label?: string;
}

/** The first index whose row ends below `y` (offsets[i] is where row i starts; offsets has n+1 entries). */
function firstRowEndingBelow(offsets: readonly number[], y: number): number {
  let low = 0;
  let high = offsets.length - 2;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((offsets[mid + 1] ?? 0) <= y) low = mid + 1;
    else high = mid;
  }
  return Math.max(0, low);
}

/**
 * A scrolling list that keeps only the rows near the viewport in the DOM (a conversation of
 * 10,000 events, a long result table). Row heights are estimated, then measured as rows render
 * (ResizeObserver), so rows of any height, opening and closing, place correctly.
 */
export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, keyOf, estimate } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const [measured, setMeasured] = useState(0);
  const [viewport, setViewport] = useState({ top: 0, height: 600 });
  const following = useRef(true);

  const offsets = useMemo(() => {
    const result = [0];
    let y = 0;
    for (const item of items) {
      y += heights.current.get(keyOf(item)) ?? estimate(item);
      result.push(y);
    }
    return result;
    // `measured` changes whenever a height does: the map itself is mutable.
  }, [items, keyOf, estimate, measured]);

  const observer = useMemo(() => {
    if (typeof ResizeObserver === 'undefined') return undefined;
    return new ResizeObserver((entries) => {
      let changed = false;
      for (const entry of entries) {
        const element = entry.target;
        const key = element instanceof HTMLElement ? element.dataset.key : undefined;
        const height = Math.ceil(entry.borderBoxSize[0]?.blockSize ?? element.getBoundingClientRect().height);
        if (key === undefined || heights.current.get(key) === height) continue;
        heights.current.set(key, height);
        changed = true;
      }
      if (changed) setMeasured((n) => n + 1);
    });
  }, []);
  useEffect(() => () => observer?.disconnect(), [observer]);

  const onScroll = useCallback(() => {
    const element = scroller.current;
    if (element === null) return;
    following.current = element.scrollHeight - element.scrollTop - element.clientHeight <= FOLLOW_SLACK_PX;
    setViewport({ top: element.scrollTop, height: element.clientHeight });
  }, []);
  // The viewport's own size changes too (a window resized, a list that grows up to its max-height).
  useLayoutEffect(() => {
    onScroll();
    const element = scroller.current;
    if (element === null || typeof ResizeObserver === 'undefined') return undefined;
    const resized = new ResizeObserver(onScroll);
    resized.observe(element);
    return () => {
      resized.disconnect();
    };
  }, [onScroll]);

  const total = offsets.at(-1) ?? 0;
  useLayoutEffect(() => {
    const element = scroller.current;
    if (props.follow === true && following.current && element !== null) {
      element.scrollTop = element.scrollHeight;
    }
  }, [total, props.follow]);

  const first = firstRowEndingBelow(offsets, viewport.top - OVERSCAN_PX);
  let last = first;
  const bottom = viewport.top + viewport.height + OVERSCAN_PX;
  while (last < items.length && (offsets[last] ?? 0) < bottom) last += 1;

  const ref = useCallback(
    (element: HTMLElement | null) => {
      if (element === null || observer === undefined) return undefined;
      observer.observe(element);
      // A row scrolled out of the window leaves the DOM: stop measuring it.
      return () => {
        observer.unobserve(element);
      };
    },
    [observer],
  );
  return (
    <div ref={scroller} class={props.class} onScroll={onScroll} role="feed" aria-label={props.label}>
      <div style={{ height: `${offsets[first] ?? 0}px` }} />
      {items.slice(first, last).map((item) => (
        <div key={keyOf(item)} data-key={keyOf(item)} ref={ref}>
          {props.renderItem(item)}
        </div>
      ))}
      <div style={{ height: `${total - (offsets[last] ?? total)}px` }} />
    </div>
  );
}
