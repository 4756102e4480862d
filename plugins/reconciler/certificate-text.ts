// A route's certificate state as one line of text, for `berth status` and `berth proxy routes`: kept
// apart from the status module so that the commands load none of the reconciler's runtime.
import type { RouteStatus } from './status.js'

/** One line for a certificate state: `valid (issuer, until date)`, `pending`, `failed (2 attempts, next …): reason`. */
export function describeCertificate (c: RouteStatus['certificate'] & { attempts?: number, next_attempt_at?: string }): string {
  const until = c.not_after === undefined ? '' : ` (${c.issuer ?? '?'}, until ${c.not_after.slice(0, 10)})`
  if (c.status === 'failed') return `failed (${c.attempts ?? 0} attempts, next ${c.next_attempt_at ?? '?'}): ${c.error ?? ''}`
  return `${c.status}${until}`
}
