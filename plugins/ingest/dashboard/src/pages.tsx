// Paging a list by the API's cursors: the cursors of the pages seen so far (the first page's is ''),
// and the Previous / Next buttons under the list.
import { useState } from 'preact/hooks'

export interface CursorPages {
  /** The cursor of the page shown ('' for the first). */
  cursor: string
  /** Back to the first page (a filter changed). */
  restart: () => void
  back: (() => void) | undefined
  forward: (next: string) => void
}

export function useCursorPages (): CursorPages {
  const [cursors, setCursors] = useState<string[]>([''])
  return {
    cursor: cursors[cursors.length - 1],
    restart: () => { setCursors(['']) },
    back: cursors.length === 1 ? undefined : () => { setCursors(cursors.slice(0, -1)) },
    forward: next => { setCursors([...cursors, next]) }
  }
}

/** Previous and Next under a list whose answer gave `next` (null on the last page, undefined while loading). */
export function Pages ({ pages, next }: { pages: CursorPages, next: string | null | undefined }) {
  return (
    <div class="pages">
      <button disabled={pages.back === undefined} onClick={() => { pages.back?.() }}>Previous</button>
      <button disabled={next === null || next === undefined} onClick={() => { if (next !== null && next !== undefined) pages.forward(next) }}>Next</button>
    </div>
  )
}
