// What every public page's routes share (the event pages, the forms and petitions): the answer with
// the page's own policy and no caching, the form body's parser and its refusals as pages, one form
// field's value, the e-mail address check, the words for a form token refused, and the per-address
// limit on posts (one RateLimit for all the public pages, so an address has one budget).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { messageOf } from '../../../../kernel/index.js'
import { messagePage, PUBLIC_PAGE_POLICY } from './public-pages.js'
import type { RateLimit } from './rate-limit.js'

/** Largest form body; a larger one answers 400. */
export const MAX_FORM_BYTES = 8192
/** Longest slug or id read from a public page's path. */
export const MAX_REF_CHARS = 100
export const EMAIL = /^[^@\s<>"]+@[^@\s<>"]+\.[^@\s<>"]+$/

/** Answer a public page: HTML, never cached, under `policy` (the public pages' own unless told). */
export const sendPage = async (reply: FastifyReply, status: number, html: string, policy = PUBLIC_PAGE_POLICY): Promise<FastifyReply> =>
  await reply.code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', policy)
    .send(html)

export const NOT_A_FORM = messagePage('Form not readable', 'Please send the form from the page it is on.')

/** A form field's single value ('' when absent), undefined when sent more than once. */
export function single (form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name)
  return values.length > 1 ? undefined : (values[0] ?? '').trim()
}

/** What the page says when its form token is refused, by reason (public-tokens.ts). */
export const TOKEN_REFUSALS = {
  invalid: 'This form was not recognised (it may have been altered). Please check your details and send it again.',
  early: 'The form was sent too quickly after the page loaded. Please check your details and send it again.',
  expired: 'This page was open too long and the form has expired. Please check your details and send it again.',
  used: 'This form was sent already. If you meant to sign up again, check your details and send it again.'
} as const

/**
 * Read url-encoded form bodies (at most MAX_FORM_BYTES) as URLSearchParams in this route scope, and
 * answer a body too large, of another media type or unreadable with a 400 page, and a failure with 503.
 */
export function readForms (app: FastifyInstance, log: Logger, what: string): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_FORM_BYTES }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string))
  })
  app.setErrorHandler(async (error: FastifyError, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return await sendPage(reply, 400, messagePage('Form too large', `The form sent was larger than ${MAX_FORM_BYTES / 1024} KB. Please go back and shorten what you wrote.`))
    // Another media type, a body its parser refused (malformed JSON…): not the page's form.
    if (error.statusCode !== undefined && error.statusCode < 500) return await sendPage(reply, 400, NOT_A_FORM)
    log.error({ err: messageOf(error) }, `${what} failed`)
    return await sendPage(reply, 503, messagePage('Not completed', 'We could not complete this just now. Please try again in a few minutes.'))
  })
}

/** 429 with a page when the client address has posted too often; undefined when it may go on. */
export async function limited (limit: RateLimit, request: FastifyRequest, reply: FastifyReply, policy?: string): Promise<FastifyReply | undefined> {
  const wait = limit.take(request.ip)
  if (wait === 0) return undefined
  reply.header('retry-after', String(wait))
  return await sendPage(reply, 429, messagePage('Too many attempts', `Too many forms were sent from your network in the last minute. Please wait ${wait} seconds and try again.`), policy)
}

/** The `t` query parameter of a signed link, when there is one. */
export function linkToken (request: FastifyRequest): string | undefined {
  const token = (request.query as { t?: unknown }).t
  return typeof token === 'string' ? token : undefined
}
