// A health check of something a plugin depends on over HTTP (an identity provider, say): whether a
// URL answers 2xx within a few seconds, with the reason in one line when it does not.
import { messageOf } from './errors.js'
import type { HealthCheck } from './plugin.js'

const ANSWER_MS = 5000

/** `ok` when `url` answers 2xx within 5 s; else `down` with why, followed by `consequence`. */
export async function reachabilityCheck (url: string, consequence: string): Promise<HealthCheck> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(ANSWER_MS) })
    await response.body?.cancel()
    return response.ok ? { status: 'ok', reason: url } : { status: 'down', reason: `${url} answered ${response.status}: ${consequence}` }
  } catch (err) {
    const { cause } = err as { cause?: { code?: string, message?: string } }
    return { status: 'down', reason: `${url} is unreachable (${cause?.code ?? cause?.message ?? messageOf(err)}): ${consequence}` }
  }
}
