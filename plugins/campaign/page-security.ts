// Defence in depth for the app's pages and server functions: HTML answers carry a Content Security
// Policy that forbids framing (clickjacking) and foreign scripts, and no answer is sniffed or leaks
// its URL to other sites; a server-function call from a page of another origin is refused, beyond
// what SameSite cookies and the CBOR content type already stop.
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, onSendAsyncHookHandler } from 'fastify'
import { Forbidden } from '../../kernel/index.js'
import { CAMPAIGN_CODES } from './errors.js'

/** The policy of every HTML answer: the app's own scripts, styles and calls only, never in a frame. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // Inline style attributes (the plain message pages, the UI's computed styles) but no foreign sheets.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join('; ')

/** Headers on every answer of the app; the policy (unless the route set one of its own) and X-Frame-Options (unless that policy lets some site frame the page) on HTML ones. */
export const securityHeaders: onSendAsyncHookHandler<unknown> = async (_request: FastifyRequest, reply: FastifyReply, payload) => {
  reply.header('x-content-type-options', 'nosniff')
  reply.header('referrer-policy', 'same-origin')
  if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', CONTENT_SECURITY_POLICY)
    // A page a route lets some sites frame (an embeddable public form) says so in its frame-ancestors alone.
    if (String(reply.getHeader('content-security-policy')).includes("frame-ancestors 'none'")) reply.header('x-frame-options', 'DENY')
  }
  return payload
}

/**
 * Refuse a request whose Origin is another site's: a browser names the page's origin on every POST. Its
 * own origin is the app's address (`[campaign].app_url`), or the Host the request came to. Clients that
 * send no Origin (scripts, the CLI) are not browsers on other sites, and pass.
 */
export function sameOriginOnly (appUrl: string): onRequestAsyncHookHandler {
  const configured = appUrl === '' ? undefined : new URL(appUrl).origin
  return async request => {
    const origin = request.headers.origin
    if (origin === undefined || origin === configured) return
    let host: string | undefined
    try {
      host = new URL(origin).host
    } catch {
      host = undefined
    }
    if (host === undefined || host !== request.headers.host) throw new Forbidden(`cross-origin call refused: ${origin.slice(0, 100)} is not this application's origin`, { code: CAMPAIGN_CODES.CROSS_ORIGIN })
  }
}
