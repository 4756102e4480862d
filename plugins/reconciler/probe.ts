// HTTP probes of a container's primary port: health waits before dependants start, and liveness.
/** Whether GET http://host:port<path> answers 2xx or 3xx within `timeoutMs`. */
export async function probe (address: { host: string, port: number }, path: string, timeoutMs: number): Promise<boolean> {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host
  try {
    const response = await fetch(`http://${host}:${address.port}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
    await response.body?.cancel()
    return response.status >= 200 && response.status < 400
  } catch {
    return false
  }
}
