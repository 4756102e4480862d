// The public unsubscribe routes, open to everyone (the link's signed token is the authority):
// GET /unsubscribe?t=… shows a page with a confirm button and changes nothing (mail scanners follow
// links); POST /unsubscribe?t=… is the one-click unsubscribe of RFC 8058 (List-Unsubscribe-Post) and
// the confirm button's target: the address goes on the suppression list and the person's consent for
// the channel is withdrawn. A malformed or forged token answers 400.
import escapeHtml from 'escape-html'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { messageOf } from '../../../../kernel/index.js'
import type { Messenger } from './messenger.js'

/** Longest token accepted (a person id of 64 characters makes about 140). */
const MAX_TOKEN_CHARS = 400
/** Largest body of an unsubscribe POST (`List-Unsubscribe=One-Click`, or an empty form). */
const MAX_BODY_BYTES = 4096

const STYLE = 'font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5'

function page (title: string, paragraphs: readonly string[], form = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
    `<body style="${STYLE}"><h1>${escapeHtml(title)}</h1>${paragraphs.map(p => `<p>${escapeHtml(p)}</p>`).join('')}${form}</body></html>`
}

const send = async (reply: FastifyReply, status: number, html: string): Promise<FastifyReply> =>
  await reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html)

const BAD_LINK = page('Unsubscribe link not valid', ['This unsubscribe link is incomplete or was altered. Please use the link from the message exactly as it came.'])

const channelWords = (channel: 'email' | 'sms'): string => channel === 'email' ? 'e-mails' : 'text messages'

export function unsubscribeRoutes (messenger: Messenger, log: Logger): FastifyPluginAsync {
  const open = { config: { access: 'open' as const } }
  const tokenOf = async (query: unknown): Promise<{ token: string, person_id: string, channel: 'email' | 'sms' } | undefined> => {
    const token = (query as { t?: unknown }).t
    if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return undefined
    const named = await messenger.readToken(token)
    return named === undefined ? undefined : { token, ...named }
  }
  return async app => {
    // Mail clients post `List-Unsubscribe=One-Click` as a form; the body itself is not needed.
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, _body, done) => { done(null, undefined) })

    app.get('/unsubscribe', open, async (request, reply) => {
      const named = await tokenOf(request.query)
      if (named === undefined) return await send(reply, 400, BAD_LINK)
      const action = `/unsubscribe?t=${encodeURIComponent(named.token)}`
      const form = `<form method="post" action="${escapeHtml(action)}"><button type="submit" style="font-size:1.1rem;padding:.6rem 1.2rem">Unsubscribe</button></form>`
      return await send(reply, 200, page('Unsubscribe', [`Press the button to receive no more ${channelWords(named.channel)} from us.`], form))
    })

    app.post('/unsubscribe', open, async (request, reply) => {
      const named = await tokenOf(request.query)
      if (named === undefined) return await send(reply, 400, BAD_LINK)
      try {
        await messenger.unsubscribe(named.person_id, named.channel)
      } catch (err) {
        log.error({ err: messageOf(err) }, 'unsubscribe failed')
        return await send(reply, 503, page('Unsubscribe not completed', ['We could not record your request just now. Please try again in a few minutes.']))
      }
      return await send(reply, 200, page('Unsubscribed', [`You will receive no more ${channelWords(named.channel)} from us.`]))
    })
  }
}
