// The UI's access to the server: who is signed in (check-auth), a hook that runs a server function
// and keeps its result, its error and whether it is running, the generative provider's fallback note
// of the latest call that carried one (shown above every page), and how amounts and elections are shown.
import { useCallback, useEffect, useState } from 'preact/hooks'
import { callServerFunction } from '../../client.js'

export interface AuthInfo {
  authenticated: boolean
  email: string
  name: string
  role: string
  modules: string[]
  functions: string[]
}

export async function checkAuth (): Promise<AuthInfo> {
  return await callServerFunction<AuthInfo>('check-auth')
}

export interface Call<T> {
  data: T | undefined
  error: string | undefined
  busy: boolean
  run: (args?: object) => Promise<T | undefined>
}

/** The function whose result carried the shown fallback note, and the note; cleared when that function answers without one. */
let fallback: { name: string, note: string } | undefined
const fallbackListeners = new Set<() => void>()

function noteFallback (name: string, result: unknown): void {
  const note = typeof result === 'object' && result !== null ? (result as { fallback_note?: unknown }).fallback_note : undefined
  if (typeof note === 'string') fallback = { name, note }
  else if (fallback?.name === name) fallback = undefined
  else return
  for (const listener of fallbackListeners) listener()
}

/** The fallback note to show: the generative provider failed and the local engine answered. */
export function useFallbackNote (): string | undefined {
  const [note, setNote] = useState(fallback?.note)
  useEffect(() => {
    const listener = (): void => { setNote(fallback?.note) }
    fallbackListeners.add(listener)
    return () => { fallbackListeners.delete(listener) }
  }, [])
  return note
}

export function useCall<T> (name: string): Call<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const run = useCallback(async (args: object = {}) => {
    setBusy(true)
    setError(undefined)
    try {
      const result = await callServerFunction<T>(name, args)
      noteFallback(name, result)
      setData(result)
      return result
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err))
      return undefined
    } finally {
      setBusy(false)
    }
  }, [name])
  return { data, error, busy, run }
}

export function dollars (cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
}

/** An election id as people say it: `2026-general` → "2026 general". */
export function electionLabel (id: string): string {
  return id.replace(/-(primary|general)$/, ' $1')
}
