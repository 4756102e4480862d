// Reading the API from a view: data re-read when its dependencies change, stale answers dropped; and how times are shown.
import { useEffect, useState } from 'preact/hooks'

/**
 * Re-read whenever a dependency changes (live events bump `version`). An answer to a superseded read
 * is dropped: answers can arrive out of order, and a late one must not replace the newer one.
 */
export function useData<T> (load: () => Promise<T>, deps: unknown[]): { data?: T, error?: string } {
  const [state, setState] = useState<{ data?: T, error?: string }>({})
  useEffect(() => {
    let current = true
    load().then(data => { if (current) setState({ data }) }, (err: Error) => { if (current) setState({ error: err.message }) })
    return () => { current = false }
  }, deps)
  return state
}

export const when = (ms: number | null): string => ms === null ? 'never' : new Date(ms).toLocaleString()
