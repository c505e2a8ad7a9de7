import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { TranscriptItem } from '../sdk.ts';
import { TranscriptView } from './transcript-view.tsx';

// Items rendered while following the bottom, and how many more each "load earlier" adds.
const tailSize = 150;
const pageSize = 200;
// Within this many pixels of the bottom counts as "at the bottom"; of the top, scrolling loads more.
const bottomSlack = 80;
const topSlack = 400;

/**
 * The scrolling transcript. Only the last items are in the page while it follows the bottom (a long
 * session opens at its last turn without building every earlier one); scrolling up to the top, or the
 * "load earlier" button, adds earlier items above without moving what is on screen, and once every
 * folded item is shown, asks for the turns before them (`onLoadEarlier`). It follows new items and
 * streamed text until the person scrolls up, and offers a jump back to the latest.
 */
export function TranscriptScroller({
  items,
  revisionOf,
  sessionKey,
  followRequest,
  hasEarlier = false,
  onLoadEarlier,
  onOpenSession,
  onRetry,
  children,
}: {
  items: readonly TranscriptItem[];
  revisionOf: (item: TranscriptItem) => number;
  /** Changing it (another session) starts again at the bottom. */
  sessionKey: string | undefined;
  /** Changing it (the person sent a message) follows the bottom again. */
  followRequest: number;
  /** Whether the server has turns before the first item. */
  hasEarlier?: boolean;
  /** Loads those turns; calls `beforePrepend` with how many items come, just before they are added. */
  onLoadEarlier?: (beforePrepend: (added: number) => void) => void;
  onOpenSession: (sessionId: string) => void;
  onRetry: ((text: string) => void) | undefined;
  /** Shown instead of a transcript (no session, or a missing one). */
  children?: ComponentChildren;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  // The first item while the person reads above the tail; undefined while following the bottom.
  const readingStart = useRef<number | undefined>(undefined);
  // The scroll position this component set last: a scroll event at it is not the person scrolling.
  const lastTop = useRef(0);
  // What was on screen before items were added above: a row and where it was, and the scroll size.
  const anchor = useRef<{ row: Element | null; rowTop: number; top: number; height: number } | undefined>(
    undefined,
  );
  // A scroll to the bottom is owed at the next render: a follow request, another session, a transcript
  // shown in place of `children`, items added or dropped (the tail's first rows leave as rows come,
  // which can keep the height and lets scroll anchoring move the view). While only an item grows (a
  // streaming answer), the ResizeObserver below scrolls once the grown content is laid out, before it
  // is painted, so such a render forces no layout of its own.
  const owesBottom = useRef(true);
  // What the last render showed; a change to any of it owes the bottom.
  const shown = useRef<{
    session: string | undefined;
    content: Element | null;
    start: number;
    count: number;
  }>({ session: undefined, content: null, start: 0, count: 0 });
  const [showJump, setShowJump] = useState(false);
  const [, setLoads] = useState(0);

  const start = readingStart.current ?? Math.max(0, items.length - tailSize);

  const toBottom = (): void => {
    const element = scroller.current;
    if (element === null) return;
    element.scrollTop = element.scrollHeight;
    lastTop.current = element.scrollTop;
  };

  const followBottom = (): void => {
    follow.current = true;
    owesBottom.current = true;
    readingStart.current = undefined;
    setShowJump(false);
    setLoads((value) => value + 1);
  };

  // Keep what is on screen where it is: the layout effect shifts by how far its first row moved.
  const holdPosition = (element: HTMLDivElement): void => {
    const row = element.querySelector('[data-testid="transcript"] > :not(.load-earlier)');
    anchor.current = {
      row,
      rowTop: row?.getBoundingClientRect().top ?? 0,
      top: element.scrollTop,
      height: element.scrollHeight,
    };
    element.style.overflowAnchor = 'none';
  };

  const loadEarlier = (): void => {
    const element = scroller.current;
    if (element === null || (start === 0 && (!hasEarlier || onLoadEarlier === undefined))) return;
    follow.current = false;
    setShowJump(true);
    if (start > 0) {
      holdPosition(element);
      readingStart.current = Math.max(0, start - pageSize);
      setLoads((value) => value + 1);
      return;
    }
    readingStart.current = 0;
    onLoadEarlier?.((added) => {
      // Back at the bottom meanwhile: the tail stays as it is (the earlier items wait above it).
      if (follow.current || scroller.current === null) return;
      holdPosition(scroller.current);
      readingStart.current = Math.max(0, (readingStart.current ?? 0) + added - pageSize);
    });
  };

  useEffect(() => {
    follow.current = true;
    readingStart.current = undefined;
    setShowJump(false);
  }, [sessionKey]);

  useEffect(() => {
    if (followRequest > 0) followBottom();
  }, [followRequest]);

  // Sizes that change without a render (the window, panels below, images, blocks measured late) keep
  // the bottom in view while following.
  useEffect(() => {
    const element = scroller.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(() => {
      if (follow.current && anchor.current === undefined) toBottom();
    });
    observer.observe(element);
    const content = element.firstElementChild;
    if (content !== null) observer.observe(content);
    return () => observer.disconnect();
  }, [children === undefined]);

  // Before the frame is painted: the bottom when one is owed, or what was on screen after a load.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element === null) return;
    const content = element.firstElementChild;
    const last = shown.current;
    if (
      last.session !== sessionKey ||
      last.content !== content ||
      last.start !== start ||
      last.count !== items.length
    ) {
      shown.current = { session: sessionKey, content, start, count: items.length };
      owesBottom.current = true;
    }
    const kept = anchor.current;
    if (kept !== undefined) {
      anchor.current = undefined;
      // The row's shift is what was added above it (growth below, e.g. a live answer, is not).
      if (kept.row?.isConnected === true) {
        element.scrollTop += kept.row.getBoundingClientRect().top - kept.rowTop;
      } else element.scrollTop = kept.top + (element.scrollHeight - kept.height);
      lastTop.current = element.scrollTop;
      element.style.overflowAnchor = '';
    } else if (follow.current && owesBottom.current) {
      owesBottom.current = false;
      toBottom();
    }
  });

  const onScroll = (): void => {
    const element = scroller.current;
    if (element === null) return;
    const top = element.scrollTop;
    const atBottom = element.scrollHeight - top - element.clientHeight < bottomSlack;
    if (atBottom) {
      if (!follow.current) followBottom();
    } else if (top < lastTop.current - 1) {
      // Content growing below never lowers scrollTop: only the person scrolling up does.
      if (follow.current) {
        follow.current = false;
        readingStart.current = start;
        setShowJump(true);
      }
      if (top < topSlack) loadEarlier();
    }
    lastTop.current = element.scrollTop;
  };

  return (
    <>
      <div class="scroller" ref={scroller} data-testid="scroller" onScroll={onScroll}>
        {children ?? (
          <TranscriptView
            items={items}
            start={start}
            revisionOf={revisionOf}
            onOpenSession={onOpenSession}
            onRetry={onRetry}
          >
            {(start > 0 || hasEarlier) && (
              <button type="button" class="load-earlier" data-testid="load-earlier" onClick={loadEarlier}>
                {start > 0
                  ? `Load earlier messages (${start} ${start === 1 ? 'item' : 'items'} above)`
                  : 'Load earlier messages'}
              </button>
            )}
          </TranscriptView>
        )}
      </div>
      {showJump && (
        <button
          type="button"
          class="jump-latest"
          data-testid="jump-latest"
          onClick={() => {
            followBottom();
          }}
        >
          Jump to latest ↓
        </button>
      )}
    </>
  );
}
