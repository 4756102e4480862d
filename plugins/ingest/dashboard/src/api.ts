// The dashboard's calls to the telemetry API: the credentials of the signed-in user (kept in session
// storage for this tab), JSON in and out, `{error}` answers turned into thrown messages, and the live
// event stream read with fetch (EventSource cannot send an Authorization header).
const CREDENTIALS = 'berth-telemetry-authorization'

export type Role = 'viewer' | 'provisioner' | 'admin'
export interface Me { name: string, role: Role }

export function signedIn (): boolean {
  return sessionStorage.getItem(CREDENTIALS) !== null
}

export function keepCredentials (authorization: string): void {
  sessionStorage.setItem(CREDENTIALS, authorization)
}

export function signOut (): void {
  sessionStorage.removeItem(CREDENTIALS)
}

/** Call the API; a Uint8Array body goes as application/octet-stream, anything else as JSON. */
export async function api<T> (method: string, path: string, body?: unknown): Promise<T> {
  const authorization = sessionStorage.getItem(CREDENTIALS)
  const bytes = body instanceof Uint8Array
  const response = await fetch(path, {
    method,
    // X-Requested-With: no WWW-Authenticate challenge on a 401, so the browser shows no dialog.
    headers: {
      'x-requested-with': 'XMLHttpRequest',
      ...(authorization !== null && { authorization }),
      ...(body !== undefined && { 'content-type': bytes ? 'application/octet-stream' : 'application/json' })
    },
    body: body === undefined ? undefined : bytes ? new Blob([body as Uint8Array<ArrayBuffer>]) : JSON.stringify(body)
  })
  const text = await response.text()
  const json = text === '' ? undefined : JSON.parse(text) as unknown
  if (!response.ok) throw new Error((json as { error?: string } | undefined)?.error ?? `HTTP ${response.status}`)
  return json as T
}

/** Basic sign-in: the credentials are checked with /auth/me before they are kept. */
export async function signIn (user: string, password: string): Promise<Me> {
  keepCredentials(`Basic ${btoa(unescape(encodeURIComponent(`${user}:${password}`)))}`)
  try {
    return await api<Me>('GET', '/auth/me')
  } catch (err) {
    signOut()
    throw err
  }
}

export interface LiveEvent { kind: string, device?: string, at: number }

/** Follow /events/stream until `signal` aborts, reconnecting after a failure; calls `onEvent` per event. */
export async function followEvents (onEvent: (event: LiveEvent) => void, onState: (live: boolean) => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const authorization = sessionStorage.getItem(CREDENTIALS) ?? ''
      const response = await fetch('/events/stream', { headers: { authorization, 'x-requested-with': 'XMLHttpRequest' }, signal })
      if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`)
      onState(true)
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      let pending = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        pending += value
        let end: number
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const data = pending.slice(0, end).split('\n').find(line => line.startsWith('data: '))
          pending = pending.slice(end + 2)
          if (data !== undefined) onEvent(JSON.parse(data.slice(6)) as LiveEvent)
        }
      }
    } catch {
      if (signal.aborted) return
    }
    onState(false)
    await new Promise(resolve => setTimeout(resolve, 2000))
  }
}
