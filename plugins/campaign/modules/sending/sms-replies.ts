// Replies to the campaign's texts, posted by the SMS provider to /sms/inbound in Twilio's format: a
// form with From, To, Body and MessageSid, signed in X-Twilio-Signature (base64 HMAC-SHA1, keyed with
// the account's auth token, over the webhook's URL followed by every parameter's name and value in
// name order). Carrier keywords act on the sender's number: STOP and its synonyms put it on the
// suppression list and withdraw the SMS consent of the person holding it; START and its synonyms take
// it off again when its holder put it there (a STOP, an unsubscribe link) and give consent back; HELP
// and INFO are answered with the configured help text. Every reply is logged once per MessageSid,
// with the person holding the number (none for an unknown number: nobody is created).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { actingAs, type CampaignStore, type Table, timePrefix, PeopleView } from '../../module-kit.js'
import { normalPhone, type PeopleDirectory } from '../people/index.js'
import { BY_SMS_REPLY, type Messenger } from './messenger.js'
import { manifest } from './manifest.js'

/** What each role sees of a reply to a text (the manifest's view). */
export const SMS_REPLY_VIEW = new PeopleView<SmsReply>('sms reply', manifest.views['sms reply'])

/** The route the provider posts replies to. */
export const SMS_REPLY_PATH = '/sms/inbound'

/** The carrier keywords, matched on the whole reply without regard to case or surrounding spaces. */
export const KEYWORDS = {
  stop: ['stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit'],
  start: ['start', 'yes', 'unstop'],
  help: ['help', 'info']
} as const
export type Keyword = keyof typeof KEYWORDS

/** What a reply did. */
export type ReplyAction = 'suppressed' | 'resubscribed' | 'consent given, still suppressed by staff' | 'help sent' | 'none'

export interface SmsReply {
  /** `{received time}-{MessageSid}`: the log lists the newest first. */
  reply_id: string
  message_sid: string
  /** The sender's number, as `+` and digits when it is a phone number. */
  from: string
  /** The campaign's number it was sent to. */
  to: string
  body: string
  keyword: Keyword | null
  action: ReplyAction
  /** The person holding the sender's number, or null. */
  person_id: string | null
  received_at: string
}

export interface SmsReplySettings {
  /** The provider account's auth token; '' turns replies off. */
  authToken: string
  /** The webhook's public URL as configured at the provider (read when a request is checked). */
  url: () => string
  helpText: string
}

export interface IncomingReply { sid: string, from: string, to: string, body: string }

/** The log and its indexes (not audited: audit.ts names them). */
const REPLIES = 'sms-replies'
/** MessageSid → reply_id: each reply is handled once. */
const BY_SID = 'sms-reply-sids'
/** [person_id, reply_id] → null. */
const BY_PERSON = 'sms-replies-by-person'

/** The keyword a reply is, or null. */
export function keywordOf (body: string): Keyword | null {
  const word = body.trim().toLowerCase()
  for (const [keyword, words] of Object.entries(KEYWORDS) as Array<[Keyword, readonly string[]]>) if (words.includes(word)) return keyword
  return null
}

/** Twilio's signature of a request to `url` with the form `params`: base64 HMAC-SHA1 over the URL, then each name and value, sorted by name (and value). */
export function twilioSignature (authToken: string, url: string, params: Iterable<[string, string]>): string {
  const order = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0
  const sorted = [...params].sort(([a, x], [b, y]) => order(a, b) || order(x, y))
  return createHmac('sha1', authToken).update(url + sorted.map(([name, value]) => name + value).join(''), 'utf8').digest('base64')
}

/** The TwiML answer: a message back to the sender, or nothing. */
export function twiml (message?: string): string {
  const escaped = message === undefined
    ? ''
    : `<Message>${message.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replace(/[&<>"']/g, c => `&${({ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' })[c]};`)}</Message>`
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${escaped}</Response>`
}

export class SmsReplies {
  readonly #store: CampaignStore
  readonly #people: PeopleDirectory
  readonly #messenger: Messenger
  readonly #settings: SmsReplySettings
  readonly #replies: Table<SmsReply>
  readonly #byPerson: Table<null, string[]>

  constructor (store: CampaignStore, people: PeopleDirectory, messenger: Messenger, settings: SmsReplySettings) {
    this.#store = store
    this.#people = people
    this.#messenger = messenger
    this.#settings = settings
    this.#replies = store.table<SmsReply>(REPLIES)
    this.#byPerson = store.table<null, string[]>(BY_PERSON)
  }

  /** Whether replies are received: the provider's auth token is configured. */
  get enabled (): boolean {
    return this.#settings.authToken !== ''
  }

  /** Whether `signature` is the provider's for a request to the webhook's URL with `query` (`?…` as received, or '') and the form `params`; compared in constant time. */
  signed (query: string, params: Iterable<[string, string]>, signature: string): boolean {
    if (!this.enabled) return false
    const url = this.#settings.url().replace(/\?.*$/s, '') + query
    const expected = Buffer.from(twilioSignature(this.#settings.authToken, url, params))
    const given = Buffer.from(signature)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /**
   * Act on a reply and log it, in one transaction holding its MessageSid, the people and the sender's
   * suppression; a MessageSid already logged changes nothing (`reply` undefined). The message to
   * answer with, for HELP.
   */
  async receive (incoming: IncomingReply): Promise<{ reply?: SmsReply, message?: string }> {
    let phone: string | undefined
    try {
      phone = normalPhone(incoming.from) || undefined
    } catch {
      phone = undefined
    }
    const subjects = [`sms-reply:${incoming.sid}`, this.#people.subject, ...(phone !== undefined ? [this.#messenger.suppressionSubject(phone)] : [])]
    return await actingAs({ by: BY_SMS_REPLY, role: 'system', action: 'sms-reply' }, async () => await this.#store.transaction(subjects, async tx => {
      const sids = tx.table<string>(BY_SID)
      if (await sids.has(incoming.sid)) return {}
      const keyword = keywordOf(incoming.body)
      const person = phone === undefined ? undefined : await this.#people.byPhoneIn(tx, phone)
      let action: ReplyAction = 'none'
      if (keyword === 'help') action = 'help sent'
      else if (phone !== undefined && keyword === 'stop') {
        await this.#messenger.suppressIn(tx, phone, 'replied STOP to a text', BY_SMS_REPLY)
        if (person !== undefined) await this.#people.setConsentIn(tx, person, 'sms', false)
        action = 'suppressed'
      } else if (phone !== undefined && keyword === 'start') {
        const stillSuppressed = await this.#messenger.liftOwnSuppressionIn(tx, phone)
        if (person !== undefined) await this.#people.setConsentIn(tx, person, 'sms', true)
        action = stillSuppressed ? 'consent given, still suppressed by staff' : 'resubscribed'
      }
      const at = new Date()
      const reply: SmsReply = {
        reply_id: `${timePrefix(at)}-${incoming.sid}`,
        message_sid: incoming.sid,
        from: phone ?? incoming.from,
        to: incoming.to,
        body: incoming.body,
        keyword,
        action,
        person_id: person?.person_id ?? null,
        received_at: at.toISOString()
      }
      await tx.table<SmsReply>(REPLIES).put(reply.reply_id, reply)
      await sids.put(incoming.sid, reply.reply_id)
      if (person !== undefined) await tx.table<null, string[]>(BY_PERSON).put([person.person_id, reply.reply_id], null)
      return { reply, ...(keyword === 'help' ? { message: this.#settings.helpText } : {}) }
    }))
  }

  /** One page of the log, newest first, optionally of one person and one keyword (`none`: replies that are no keyword); `cursor` is the last reply_id of the previous page. */
  async page (limit: number, cursor: string | undefined, filter: { person_id?: string, keyword?: Keyword | 'none' }): Promise<{ items: SmsReply[], next_cursor: string | null }> {
    const items: SmsReply[] = []
    const keep = (reply: SmsReply): boolean => filter.keyword === undefined || reply.keyword === (filter.keyword === 'none' ? null : filter.keyword)
    for await (const reply of filter.person_id === undefined ? this.#newest(cursor) : this.#newestOf(filter.person_id, cursor)) {
      if (!keep(reply)) continue
      if (items.length === limit) return { items, next_cursor: items[items.length - 1].reply_id }
      items.push(reply)
    }
    return { items, next_cursor: null }
  }

  /** The newest `limit` replies of any of these people (a person and those merged into them), newest first. */
  async ofPeople (personIds: readonly string[], limit: number): Promise<SmsReply[]> {
    const all: SmsReply[] = []
    for (const id of personIds) {
      let taken = 0
      for await (const reply of this.#newestOf(id, undefined)) {
        all.push(reply)
        if (++taken === limit) break
      }
    }
    return all.sort((a, b) => b.reply_id.localeCompare(a.reply_id)).slice(0, limit)
  }

  async * #newest (cursor: string | undefined): AsyncIterable<SmsReply> {
    for await (const { value } of this.#replies.range({ reverse: true, ...(cursor !== undefined ? { start: cursor, exclusiveStart: true } : {}) })) yield value
  }

  async * #newestOf (personId: string, cursor: string | undefined): AsyncIterable<SmsReply> {
    // Reply ids hold digits, letters, T, Z and -: `~` sorts after every one.
    const range = { reverse: true, start: [personId, cursor ?? '~'], end: [personId], exclusiveStart: cursor !== undefined }
    for await (const { key } of this.#byPerson.range(range)) {
      const reply = await this.#replies.get(key[1])
      if (reply !== undefined) yield reply
    }
  }
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** Replies to texts from the SMS provider's webhook: carrier keywords acted on, each reply logged. */
    replies: SmsReplies
  }
}
