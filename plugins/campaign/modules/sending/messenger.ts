// Sending e-mail and SMS to people: each recipient's merge fields filled in, only to people who gave
// consent for the channel, never to do-not-contact or to an address on the suppression list. E-mail
// goes through one pooled SMTP transport (nodemailer) with an HMAC-signed unsubscribe link and the
// one-click List-Unsubscribe headers; SMS through the configured HTTP provider. Every recipient of a
// send gets one record in the send log, written as soon as their result is known.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createTransport } from 'nodemailer'
import { BadRequest, StartupError, Unavailable, messageOf } from '../../../../kernel/index.js'
import { type OutboundClient } from '../../../../kernel/runtime-api.js'
import { actingAs, type SecretResolver, type CampaignConfig, type CampaignStore, type Table, type Transaction, timeKey, CAMPAIGN_CODES, PeopleView, keptKey } from '../../module-kit.js'
import { normalEmail, normalPhone, type Channel, type PeopleDirectory, type Person } from '../people/index.js'
import { manifest } from './manifest.js'

/** What each role sees of a send log record (the manifest's view). */
export const SEND_LOG_VIEW = new PeopleView<SendLogRecord>('send log', manifest.views['send log'])

export interface Outgoing {
  channel: Channel
  /** E-mail only; merge fields allowed. */
  subject?: string
  /** Plain text; merge fields allowed. */
  body: string
  /** Why the message is sent (`newsletter`, `shift-reminder`…), kept in the send log. */
  purpose: string
  /**
   * About something the person asked for (a reminder of the shift they signed up for): sent without
   * their consent to campaign messages, but never to someone not to be contacted or suppressed.
   */
  transactional?: boolean
  /** E-mail only: files attached as they are (no merge fields), such as an RSVP's calendar entry. */
  attachments?: readonly Attachment[]
}

export interface Attachment { filename: string, content: string, contentType: string }

export interface SendSummary {
  send_id: string
  sent: number
  failed: number
  skipped: Array<{ person_id: string, reason: string }>
}

export type SendStatus = 'sent' | 'failed' | 'skipped'

/** One recipient of one send. */
export interface SendLogRecord {
  send_id: string
  channel: Channel
  person_id: string
  /** The e-mail address or phone number it went to ('' when there was none). */
  address: string
  purpose: string
  status: SendStatus
  /** The SMTP server's answer or the SMS provider's status, the error, or why the recipient was skipped. */
  response: string
  /** The Message-ID of an e-mail, the provider's id of an SMS ('' when none). */
  message_id: string
  at: string
  sent_by: string
}

export interface Suppression {
  /** Lower-cased e-mail address, or a phone number as + and digits. */
  address: string
  channel: Channel
  reason: string
  added_at: string
  added_by: string
}

export interface MessengerSettings {
  /** `smtp://user:pass@host:port` or `smtps://…`; '' turns e-mail off. */
  smtpUrl: string
  mailFrom: string
  /** The SMS provider's endpoint; '' turns SMS off. */
  smsUrl: string
  smsToken: string
  /** The application's public base URL, for unsubscribe links (read when a link is made). */
  appUrl: () => string
}

/** A [campaign] setting that may be a ${secrets.NAME} reference, resolved through the secrets plugin. */
export function campaignSecret (config: CampaignConfig, key: 'smtp_url' | 'sms_token' | 'sms_inbound_auth_token', secrets: SecretResolver | undefined): string {
  const value = config[key]
  if (!value.includes('${secrets.')) return value
  if (secrets === undefined) throw new StartupError(`[campaign].${key} names a secret, but the secrets plugin is not enabled`)
  return secrets.resolve({ [key]: value }, 'campaign')[key]
}

/** The messenger's settings from [campaign]: smtp_url and sms_token may be ${secrets.NAME} references. */
export function messengerSettings (config: CampaignConfig, secrets: SecretResolver | undefined, appUrl: () => string): MessengerSettings {
  return { smtpUrl: campaignSecret(config, 'smtp_url', secrets), mailFrom: config.mail_from, smsUrl: config.sms_url, smsToken: campaignSecret(config, 'sms_token', secrets), appUrl }
}

/** The merge fields a subject or body may hold, as `{{name}}`. */
export const MERGE_FIELDS = ['name', 'first_name', 'email', 'unsubscribe_url'] as const
type MergeField = typeof MERGE_FIELDS[number]
const MERGE = /\{\{\s*([^{}]*?)\s*\}\}/g

/** Messages in flight at once (the pool's SMTP connections, concurrent SMS requests). */
export const SEND_CONCURRENCY = 4
/** Longest wait for the SMS provider's answer. */
const SMS_TIMEOUT_MS = 15_000
const SEND_LOG = 'send-log'
const SUPPRESSIONS = 'suppressions'
/** Who put an address on the suppression list when its holder did it: through the link in a message, or by replying STOP to a text. */
export const BY_UNSUBSCRIBE_LINK = 'unsubscribe link'
export const BY_SMS_REPLY = 'sms reply'
const SECRETS = 'sending-secrets'
const UNSUBSCRIBE_KEY = 'unsubscribe-hmac'

/** 400 naming the first merge field in `text` that is not one of MERGE_FIELDS. */
export function checkMergeFields (field: string, text: string): void {
  for (const [, name] of text.matchAll(MERGE)) {
    if (!(MERGE_FIELDS as readonly string[]).includes(name)) {
      throw new BadRequest(`invalid arguments: /${field}: unknown merge field {{${name}}}; the fields are ${MERGE_FIELDS.map(f => `{{${f}}}`).join(', ')}`, { code: CAMPAIGN_CODES.UNKNOWN_MERGE_FIELD })
    }
  }
}

/** `text` with each merge field replaced by the recipient's value. */
export function merge (text: string, values: Readonly<Record<MergeField, string>>): string {
  return text.replace(MERGE, (whole, name: string) => (MERGE_FIELDS as readonly string[]).includes(name) ? values[name as MergeField] : whole)
}

/** The key an address is suppressed under: a lower-cased e-mail, or a phone number as + and digits. */
export function suppressionKey (address: string): { key: string, channel: Channel } {
  const trimmed = address.trim()
  if (trimmed.includes('@')) {
    if (!/^[^@\s]+@[^@\s]+$/.test(trimmed)) throw new BadRequest(`invalid arguments: /address: ${JSON.stringify(address)} is not an e-mail address or phone number`)
    return { key: normalEmail(trimmed), channel: 'email' }
  }
  try {
    return { key: normalPhone(trimmed), channel: 'sms' }
  } catch {
    throw new BadRequest(`invalid arguments: /address: ${JSON.stringify(address)} is not an e-mail address or phone number`)
  }
}

const addressOf = (person: Person, channel: Channel): string => channel === 'email' ? person.email : person.phone
const oneLine = (text: string): string => text.replace(/[\r\n]+/g, ' ')

interface Job { person: Person, address: string }

export class Messenger {
  readonly #people: PeopleDirectory
  readonly #settings: MessengerSettings
  readonly #outbound: OutboundClient
  readonly #log: Table<SendLogRecord>
  readonly #suppressions: Table<Suppression>
  readonly #store: CampaignStore
  readonly #hmacKey: () => Promise<Buffer>
  #transport: ReturnType<typeof createTransport> | undefined

  /** `outbound`: the kernel's client, for the SMS provider (the operator's configured endpoint). */
  constructor (store: CampaignStore, people: PeopleDirectory, settings: MessengerSettings, outbound: OutboundClient) {
    this.#store = store
    this.#people = people
    this.#settings = settings
    this.#outbound = outbound
    this.#log = store.table<SendLogRecord>(SEND_LOG)
    this.#suppressions = store.table<Suppression>(SUPPRESSIONS)
    this.#hmacKey = keptKey(store, SECRETS, UNSUBSCRIBE_KEY)
  }

  /** Whether the channel is configured. */
  enabled (channel: Channel): boolean {
    return channel === 'email' ? this.#settings.smtpUrl !== '' : this.#settings.smsUrl !== ''
  }

  /** 400 naming the first unknown merge field of the subject or body. */
  checkMerge (message: Outgoing): void {
    if (message.channel === 'email') checkMergeFields('subject', message.subject ?? '')
    checkMergeFields('body', message.body)
  }

  /** 400 for an unknown merge field, 503 when the channel is off: what `send` refuses before sending anything. */
  check (message: Outgoing): void {
    this.checkMerge(message)
    if (!this.enabled(message.channel)) {
      throw new Unavailable(message.channel === 'email'
        ? 'e-mail sending is off: set [campaign].smtp_url (CAMPAIGN_SMTP_URL) to an SMTP server'
        : 'SMS sending is off: set [campaign].sms_url (CAMPAIGN_SMS_URL) to the SMS provider', { code: CAMPAIGN_CODES.SENDING_OFF })
    }
  }

  /** The recipients a message may go to (each person and address once), and the others with the reason. */
  async sortRecipients (message: Outgoing, recipients: readonly Person[]): Promise<{ ready: Person[], skipped: Array<{ person_id: string, reason: string, address: string }> }> {
    const ready: Person[] = []
    const skipped: Array<{ person_id: string, reason: string, address: string }> = []
    const seenPeople = new Set<string>()
    const seenAddresses = new Set<string>()
    for (const person of recipients) {
      if (seenPeople.has(person.person_id)) continue
      seenPeople.add(person.person_id)
      const address = addressOf(person, message.channel)
      const reason = await this.#skipReason(person, message.channel, seenAddresses, message.transactional === true)
      if (reason !== undefined) skipped.push({ person_id: person.person_id, reason, address })
      else {
        seenAddresses.add(address.toLowerCase())
        ready.push(person)
      }
    }
    return { ready, skipped }
  }

  /**
   * Send `message` to each recipient who may receive it, at most SEND_CONCURRENCY at a time; the
   * others are skipped with their reason. `unknown` names people asked for who do not exist (skipped).
   */
  async send (message: Outgoing, recipients: Person[], by: string, { unknown = [] }: { unknown?: readonly string[] } = {}): Promise<SendSummary> {
    this.check(message)
    const sendId = timeKey(new Date())
    const summary: SendSummary = { send_id: sendId, sent: 0, failed: 0, skipped: [] }
    let seq = 0
    const record = async (person: { person_id: string }, address: string, status: SendStatus, response: string, messageId = ''): Promise<void> => {
      const entry: SendLogRecord = { send_id: sendId, channel: message.channel, person_id: person.person_id, address, purpose: message.purpose, status, response, message_id: messageId, at: new Date().toISOString(), sent_by: by }
      await this.#log.put(`${sendId}-${String(seq++).padStart(6, '0')}`, entry)
      if (status === 'skipped') summary.skipped.push({ person_id: person.person_id, reason: response })
      else summary[status]++
    }
    for (const id of unknown) await record({ person_id: id }, '', 'skipped', 'no such person')
    const { ready, skipped } = await this.sortRecipients(message, recipients)
    for (const { person_id: personId, reason, address } of skipped) await record({ person_id: personId }, address, 'skipped', reason)
    const jobs: Job[] = ready.map(person => ({ person, address: addressOf(person, message.channel) }))
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < jobs.length) {
        const job = jobs[next++]
        const { ok, response, messageId } = await this.#deliver(message, job)
        await record(job.person, job.address, ok ? 'sent' : 'failed', response, messageId)
      }
    }
    await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, jobs.length) }, worker))
    return summary
  }

  /** The subject and body `person` would receive (unsubscribe link included). */
  async preview (message: Outgoing, person: Person): Promise<{ subject: string, body: string }> {
    const values = await this.#mergeValues(person, message.channel)
    return { subject: oneLine(merge(message.subject ?? '', values)), body: this.#body(message, values) }
  }

  /** Why `person` is not sent to on `channel`, or undefined when they may be. */
  async #skipReason (person: Person, channel: Channel, seenAddresses: ReadonlySet<string>, transactional: boolean): Promise<string | undefined> {
    const address = addressOf(person, channel)
    if (person.consent.do_not_contact) return 'do not contact'
    if (!transactional && !person.consent[channel]) return channel === 'email' ? 'no consent to e-mail' : 'no consent to SMS'
    if (address === '') return channel === 'email' ? 'no e-mail address' : 'no phone number'
    if (!transactional && !this.#people.mayContact(person, channel)) return 'may not be contacted'
    if (await this.isSuppressed(address)) return 'on the suppression list'
    if (seenAddresses.has(address.toLowerCase())) return 'same address as another recipient'
    return undefined
  }

  async #mergeValues (person: Person, channel: Channel): Promise<Record<MergeField, string>> {
    return {
      name: person.name,
      first_name: person.name.trim().split(/\s+/)[0] ?? '',
      email: person.email,
      unsubscribe_url: await this.unsubscribeUrl(person.person_id, channel)
    }
  }

  /** The merged body; an e-mail that does not show its unsubscribe link gets it in a closing line. */
  #body (message: Outgoing, values: Record<MergeField, string>): string {
    const body = merge(message.body, values)
    if (message.channel !== 'email' || body.includes(values.unsubscribe_url)) return body
    return `${body}\n\n--\nTo receive no more e-mails from us: ${values.unsubscribe_url}\n`
  }

  async #deliver (message: Outgoing, { person, address }: Job): Promise<{ ok: boolean, response: string, messageId: string }> {
    const values = await this.#mergeValues(person, message.channel)
    const body = this.#body(message, values)
    try {
      return message.channel === 'email'
        ? await this.#email(person, address, oneLine(merge(message.subject ?? '', values)), body, values.unsubscribe_url, message.attachments ?? [])
        : await this.#sms(address, body)
    } catch (err) {
      const error = err as { response?: unknown, code?: unknown }
      const response = typeof error.response === 'string' ? error.response : `${typeof error.code === 'string' ? `${error.code}: ` : ''}${messageOf(err)}`
      return { ok: false, response, messageId: '' }
    }
  }

  async #email (person: Person, address: string, subject: string, text: string, unsubscribeUrl: string, attachments: readonly Attachment[]): Promise<{ ok: boolean, response: string, messageId: string }> {
    this.#transport ??= createTransport({
      pool: true,
      url: this.#settings.smtpUrl,
      maxConnections: SEND_CONCURRENCY,
      maxMessages: 100,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 60_000
    })
    const info = await this.#transport.sendMail({
      from: this.#settings.mailFrom,
      to: { name: oneLine(person.name), address },
      subject,
      text,
      attachments: attachments.map(file => ({ ...file })),
      headers: {
        'List-Unsubscribe': `<${unsubscribeUrl}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click'
      }
    })
    const refused = info.rejected.length > 0
    return { ok: !refused && info.accepted.length > 0, response: info.response, messageId: info.messageId }
  }

  async #sms (phone: string, body: string): Promise<{ ok: boolean, response: string, messageId: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (this.#settings.smsToken !== '') headers.authorization = `Bearer ${this.#settings.smsToken}`
    const answer = await this.#outbound.send(this.#settings.smsUrl, { headers, body: JSON.stringify({ to: phone, body }), timeoutMs: SMS_TIMEOUT_MS, trusted: true })
    const text = answer.body.toString('utf8').slice(0, 2000)
    let messageId = ''
    try {
      const parsed = JSON.parse(text) as { id?: unknown, message_id?: unknown }
      const id = parsed.message_id ?? parsed.id
      if (typeof id === 'string' || typeof id === 'number') messageId = String(id)
    } catch {
      // Not JSON: no id to keep.
    }
    const ok = answer.status >= 200 && answer.status < 300
    return { ok, response: ok ? `HTTP ${answer.status}` : `HTTP ${answer.status}${text === '' ? '' : `: ${oneLine(text).slice(0, 200)}`}`, messageId }
  }

  // The unsubscribe link: `{base64url(channel:person_id)}.{base64url(HMAC-SHA256)}` with a key made once and kept in the store.

  async #sign (payload: string): Promise<Buffer> {
    return createHmac('sha256', await this.#hmacKey()).update(payload).digest()
  }

  /** The token naming the person and channel. */
  async unsubscribeToken (personId: string, channel: Channel): Promise<string> {
    const payload = Buffer.from(`${channel}:${personId}`).toString('base64url')
    return `${payload}.${(await this.#sign(payload)).toString('base64url')}`
  }

  async unsubscribeUrl (personId: string, channel: Channel): Promise<string> {
    const url = new URL('/unsubscribe', this.#settings.appUrl())
    url.searchParams.set('t', await this.unsubscribeToken(personId, channel))
    return url.href
  }

  /** The person and channel a token names, or undefined when it is malformed or its signature does not match. */
  async readToken (token: string): Promise<{ person_id: string, channel: Channel } | undefined> {
    const [payload, signature, ...rest] = token.split('.')
    if (rest.length > 0 || payload === undefined || signature === undefined || !/^[A-Za-z0-9_-]{1,200}$/.test(payload)) return undefined
    const given = Buffer.from(signature, 'base64url')
    const expected = await this.#sign(payload)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    const [channel, ...id] = Buffer.from(payload, 'base64url').toString('utf8').split(':')
    if ((channel !== 'email' && channel !== 'sms') || id.length === 0) return undefined
    return { person_id: id.join(':'), channel }
  }

  /** One-click unsubscribe: the person's address on the suppression list and their consent for the channel withdrawn. */
  async unsubscribe (personId: string, channel: Channel): Promise<{ address: string } | undefined> {
    return await actingAs({ by: BY_UNSUBSCRIBE_LINK, role: 'system', action: 'unsubscribe' }, async () => {
      const person = await this.#people.get(personId)
      if (person === undefined) return undefined
      const address = addressOf(person, channel)
      if (address !== '') await this.suppress(address, 'unsubscribed through the link in a message', BY_UNSUBSCRIBE_LINK)
      await this.#people.withdrawConsent(person.person_id, channel, 'unsubscribed through the link in a message')
      return { address }
    })
  }

  // The suppression list.

  async isSuppressed (address: string): Promise<boolean> {
    if (address === '') return false
    return await this.#suppressions.has(suppressionKey(address).key)
  }

  /** The subject a transaction changing an address's suppression holds. */
  suppressionSubject (address: string): string {
    return `${SUPPRESSIONS}:${suppressionKey(address).key}`
  }

  /** Put an address on the suppression list (kept as first added when it is there already). */
  async suppress (address: string, reason: string, by: string): Promise<Suppression> {
    return await this.#store.transaction(this.suppressionSubject(address), async tx => await this.suppressIn(tx, address, reason, by))
  }

  /** `suppress` inside a transaction holding the address's `suppressionSubject`. */
  async suppressIn (tx: Transaction, address: string, reason: string, by: string): Promise<Suppression> {
    const { key, channel } = suppressionKey(address)
    const table = tx.table<Suppression>(SUPPRESSIONS)
    const kept = await table.get(key)
    if (kept !== undefined) return kept
    const entry: Suppression = { address: key, channel, reason, added_at: new Date().toISOString(), added_by: by }
    await table.put(key, entry)
    return entry
  }

  /**
   * Inside a transaction holding the address's `suppressionSubject`: take the address off the list
   * when its holder put it there (a STOP reply, an unsubscribe link); one staff added stays. Whether
   * it is still on the list.
   */
  async liftOwnSuppressionIn (tx: Transaction, address: string): Promise<boolean> {
    const { key } = suppressionKey(address)
    const table = tx.table<Suppression>(SUPPRESSIONS)
    const kept = await table.get(key)
    if (kept === undefined) return false
    if (kept.added_by !== BY_SMS_REPLY && kept.added_by !== BY_UNSUBSCRIBE_LINK) return true
    await table.remove(key)
    return false
  }

  /** Take an address off the suppression list; whether it was on it. */
  async unsuppress (address: string): Promise<boolean> {
    const { key } = suppressionKey(address)
    if (!await this.#suppressions.has(key)) return false
    await this.#suppressions.remove(key)
    return true
  }

  async suppressions (): Promise<Suppression[]> {
    return (await this.#suppressions.list()).map(({ value }) => value).sort((a, b) => b.added_at.localeCompare(a.added_at) || a.address.localeCompare(b.address))
  }

  // The send log, newest send first (keys are `{send_id}-{seq}`, send ids sort by time).

  async logPage (limit: number, cursor: string | undefined, filter: { send_id?: string, person_id?: string }): Promise<{ items: SendLogRecord[], next_cursor: string | null }> {
    const items: SendLogRecord[] = []
    let last: string | null = null
    const bounds = filter.send_id === undefined ? {} : { start: `${filter.send_id}-~`, end: `${filter.send_id}-` }
    const range = cursor !== undefined ? { ...bounds, start: cursor, exclusiveStart: true } : bounds
    for await (const { key, value } of this.#log.range({ reverse: true, ...range })) {
      if (filter.send_id !== undefined && value.send_id !== filter.send_id) continue
      if (filter.person_id !== undefined && value.person_id !== filter.person_id) continue
      if (items.length === limit) return { items, next_cursor: last }
      items.push(value)
      last = key
    }
    return { items, next_cursor: null }
  }

  /** Every send log record, newest send first, read in batches (for exports). */
  async * log (): AsyncIterable<SendLogRecord> {
    for await (const { value } of this.#log.range({ reverse: true })) yield value
  }

  /** Close the SMTP connections. */
  close (): void {
    this.#transport?.close()
    this.#transport = undefined
  }
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** E-mail and SMS to people, with consent, suppression, unsubscribe links and the send log. */
    messenger: Messenger
  }
}
