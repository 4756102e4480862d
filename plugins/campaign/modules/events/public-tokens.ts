// The signed tokens of the public event pages, both `{base64url(payload)}.{base64url(HMAC-SHA256)}`
// under one key made once and kept in the campaign store (so every instance sharing it agrees), the
// payload naming its purpose so a token of one kind is never taken for the other:
// - a form token (`form:{event_id}:{issued_ms}:{nonce}`), put in each RSVP form served: refused when
//   altered, for another event, sent sooner than the minimum after it was served (a script; the same
//   token may be sent again later) or later than the maximum, and used once (its use is written in
//   the store before the RSVP is taken; the uses are swept once the token would have expired anyway);
// - a link token (`{purpose}:{id}`): the cancel link of an RSVP's confirmation e-mail (`cancel`), the
//   link that confirms a form's consent to e-mail (`consent`); one purpose's link is no other's.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { type CampaignStore, keptKey } from '../../module-kit.js'

const SECRETS = 'public-page-secrets'
const KEY = 'public-page-hmac'
/** The used form tokens, keyed `{issued_ms, 15 digits}:{nonce}`, so that expired ones are one range. */
const USED = 'public-form-tokens'
/** Longest token read (a form token is about 150 characters, a cancel token about 90). */
export const MAX_TOKEN_CHARS = 400

export type FormCheck =
  | { ok: true }
  | { ok: false, reason: 'invalid' | 'early' | 'expired' | 'used' }

/** What a signed link does: cancel an RSVP, or confirm a consent given on a form. */
export type LinkPurpose = 'cancel' | 'consent'

export interface TokenWindow {
  /** Sooner than this after it was served, a form is refused (it may be sent again). */
  minMs: number
  /** Later than this, a form is refused. */
  maxMs: number
}

const pad = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(15, '0')

export class PublicTokens {
  readonly #store: CampaignStore
  readonly #window: TokenWindow
  readonly #now: () => number
  readonly #hmacKey: () => Promise<Buffer>

  constructor (store: CampaignStore, window: TokenWindow, now: () => number = Date.now) {
    this.#store = store
    this.#window = window
    this.#now = now
    this.#hmacKey = keptKey(store, SECRETS, KEY)
  }

  get window (): TokenWindow {
    return this.#window
  }

  /** A new form token for the event's page. */
  async formToken (eventId: string): Promise<string> {
    return await this.#signed(`form:${eventId}:${this.#now()}:${randomBytes(12).toString('hex')}`)
  }

  /**
   * Check a form token sent for `eventId` and, when it holds, mark it used (a second use is refused
   * as `used`). An early token is not marked: the visitor may send the form again.
   */
  async useFormToken (token: string, eventId: string): Promise<FormCheck> {
    const payload = await this.#read(token)
    const [purpose, event, issued, nonce, ...rest] = payload?.split(':') ?? []
    if (purpose !== 'form' || rest.length > 0 || event !== eventId || !/^\d{1,15}$/.test(issued ?? '') || !/^[0-9a-f]{24}$/.test(nonce ?? '')) return { ok: false, reason: 'invalid' }
    const age = this.#now() - Number(issued)
    if (age < this.#window.minMs) return { ok: false, reason: 'early' }
    if (age > this.#window.maxMs) return { ok: false, reason: 'expired' }
    const key = `${pad(Number(issued))}:${nonce}`
    const fresh = await this.#store.transaction(`${USED}:${key}`, async tx => {
      const used = tx.table<string>(USED)
      if (await used.has(key)) return false
      await used.put(key, new Date(this.#now()).toISOString())
      return true
    })
    return fresh ? { ok: true } : { ok: false, reason: 'used' }
  }

  /** Forget the uses of tokens old enough to be refused as expired anyway; how many were removed. */
  async sweep (): Promise<number> {
    const used = this.#store.table<string>(USED)
    const old = await used.list({ end: pad(this.#now() - this.#window.maxMs) })
    for (const { key } of old) await used.remove(key)
    return old.length
  }

  /** The token of a link that does `purpose` to the record `id`. */
  async linkToken (purpose: LinkPurpose, id: string): Promise<string> {
    return await this.#signed(`${purpose}:${id}`)
  }

  /** The record a link token for `purpose` names, or undefined when it is malformed, altered or for another purpose. */
  async readLinkToken (purpose: LinkPurpose, token: string): Promise<string | undefined> {
    const payload = await this.#read(token)
    if (payload?.startsWith(`${purpose}:`) !== true) return undefined
    const id = payload.slice(purpose.length + 1)
    return /^[A-Za-z0-9-]{1,64}$/.test(id) ? id : undefined
  }

  /** The token of the link that cancels the RSVP. */
  async cancelToken (rsvpId: string): Promise<string> {
    return await this.linkToken('cancel', rsvpId)
  }

  /** The RSVP a cancel token names, or undefined when it is malformed or altered. */
  async readCancelToken (token: string): Promise<string | undefined> {
    return await this.readLinkToken('cancel', token)
  }

  async #signed (payload: string): Promise<string> {
    const encoded = Buffer.from(payload).toString('base64url')
    return `${encoded}.${createHmac('sha256', await this.#hmacKey()).update(encoded).digest().toString('base64url')}`
  }

  /** The payload of a token whose signature matches, else undefined. */
  async #read (token: string): Promise<string | undefined> {
    if (token.length > MAX_TOKEN_CHARS) return undefined
    const [encoded, signature, ...rest] = token.split('.')
    if (rest.length > 0 || encoded === undefined || signature === undefined || !/^[A-Za-z0-9_-]{1,300}$/.test(encoded)) return undefined
    const given = Buffer.from(signature, 'base64url')
    const expected = createHmac('sha256', await this.#hmacKey()).update(encoded).digest()
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    return Buffer.from(encoded, 'base64url').toString('utf8')
  }
}
