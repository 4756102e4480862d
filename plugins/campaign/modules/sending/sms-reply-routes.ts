// The SMS provider's webhook for replies, open to everyone (the provider's signature is the
// authority): POST /sms/inbound with a Twilio-style form, answered with TwiML (the help text for
// HELP, else an empty response). A request whose X-Twilio-Signature is missing or does not match the
// configured URL and the form is refused with 403; while replies are off (no auth token) the route
// answers 404.
import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import { BadRequest, Forbidden, NotFound, UnsupportedMediaType } from '../../../../kernel/index.js'
import { SMS_REPLY_PATH, twiml, type SmsReplies } from './sms-replies.js'

/** Largest form accepted (Twilio's for one text with media links is a few KiB). */
const MAX_BODY_BYTES = 65_536
const FORM = 'application/x-www-form-urlencoded'
/** Twilio's message ids: letters and digits (SM + 32 hex digits). */
const SID = /^[A-Za-z0-9]{1,64}$/

export function smsReplyRoutes (replies: SmsReplies, log: Logger): FastifyPluginAsync {
  return async app => {
    app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => { done(null, body) })

    app.post(SMS_REPLY_PATH, { config: { access: 'open' } }, async (request, reply) => {
      if (!replies.enabled) throw new NotFound('SMS replies are not received: set [campaign].sms_inbound_auth_token (CAMPAIGN_SMS_INBOUND_AUTH_TOKEN) to the SMS provider\'s auth token')
      if (request.headers['content-type']?.split(';')[0].trim().toLowerCase() !== FORM) throw new UnsupportedMediaType(`a reply is posted as ${FORM}`)
      const form = new URLSearchParams(request.body as string)
      const signature = request.headers['x-twilio-signature']
      const at = request.url.indexOf('?')
      if (typeof signature !== 'string' || !replies.signed(at === -1 ? '' : request.url.slice(at), form, signature)) {
        throw new Forbidden('the X-Twilio-Signature header is missing or is not the provider\'s signature of this webhook\'s URL and form')
      }
      const sid = form.get('MessageSid') ?? ''
      const from = form.get('From') ?? ''
      if (!SID.test(sid) || from === '') throw new BadRequest('a reply needs its MessageSid (letters and digits) and From')
      const { reply: logged, message } = await replies.receive({ sid, from, to: form.get('To') ?? '', body: form.get('Body') ?? '' })
      // The sender's number and words stay out of the log.
      log.info({ message_sid: sid, keyword: logged?.keyword ?? null, action: logged?.action ?? 'none', duplicate: logged === undefined }, 'SMS reply received')
      return await reply.type('text/xml; charset=utf-8').header('cache-control', 'no-store').send(twiml(message))
    })
  }
}
