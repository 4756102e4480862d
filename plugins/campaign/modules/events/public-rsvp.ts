// RSVPs sent from the public event pages: the visitor is matched to a person by e-mail address (or
// one is made), signed up for each shift chosen (a full shift puts them on its waitlist), and the RSVP
// is kept as one record naming the shifts, so that the link in its confirmation e-mail cancels them.
// A visitor changes nothing of an existing person's record but its activity time: the name and phone
// given are kept on the RSVP record (a new person gets them). Every write is the public page's in the
// audit log, so the RSVP shows in the person's history. The confirmation e-mail (with a calendar file
// and the cancel link) goes out through the messenger after the answer, as a transactional message;
// a cancel link that moves people up from a waitlist e-mails each of them that they have a place.
import { randomUUID } from 'node:crypto'
import { Conflict, NotFound } from '../../../../kernel/index.js'
import { actingAs, type CampaignStore } from '../../module-kit.js'
import { type EventBook, type EventRecord, type MyRsvp, plain, type ReminderMessenger, shiftTime, type ShiftRecord } from './event-book.js'
import { calendar } from './ics.js'
import type { PublicTokens } from './public-tokens.js'

const RSVPS = 'public-rsvps'
/** Who the audit log and the shift's seat name as having made a public RSVP. */
export const PUBLIC_PAGE = 'public event page'

export interface PublicRsvpRecord {
  rsvp_id: string
  event_id: string
  person_id: string
  /** The shifts the visitor got a place or a waitlist place on. */
  shift_ids: string[]
  /** As the visitor gave them. */
  name: string
  email: string
  phone: string
  at: string
  cancelled_at: string | null
}

/** What the visitor sent, checked (public-routes.ts). */
export interface RsvpForm { name: string, email: string, phone: string, shift_ids: string[] }

/** What became of one shift chosen: a place, a waitlist place, or none (started, cancelled, or overlapping another place of theirs). */
export type ShiftOutcome = { status: 'confirmed' } | { status: 'waitlisted', position: number } | { status: 'refused' }

export interface RsvpResult { rsvp_id: string, shifts: Array<{ shift: ShiftRecord, outcome: ShiftOutcome }> }

export interface PublicRsvpOptions {
  messenger: () => ReminderMessenger | undefined
  /** The public base URL of the cancel link. */
  appUrl: () => string
  /** A confirmation that could not be sent (logged by the caller; the RSVP stands). */
  failed: (err: unknown) => void
  /** A confirmation being sent, for the server to wait for when it stops. */
  track: (sending: Promise<void>) => void
}

const outcomeOf = (status: MyRsvp): ShiftOutcome =>
  status.status === 'confirmed' ? { status: 'confirmed' } : { status: 'waitlisted', position: status.position ?? 1 }

export class PublicRsvps {
  readonly #book: EventBook
  readonly #store: CampaignStore
  readonly #tokens: PublicTokens
  readonly #options: PublicRsvpOptions

  constructor (book: EventBook, store: CampaignStore, tokens: PublicTokens, options: PublicRsvpOptions) {
    this.#book = book
    this.#store = store
    this.#tokens = tokens
    this.#options = options
  }

  get book (): EventBook {
    return this.#book
  }

  get emailOn (): boolean {
    return this.#options.messenger()?.enabled?.('email') === true
  }

  /** Sign the visitor up for the shifts of `event` they chose; the confirmation is sent in the background. */
  async submit (event: EventRecord, form: RsvpForm, now = new Date()): Promise<RsvpResult> {
    const result = await actingAs({ by: PUBLIC_PAGE, role: 'system', action: 'public-rsvp' }, async () => {
      const person = await this.#person(form)
      const shifts: RsvpResult['shifts'] = []
      for (const shiftId of form.shift_ids) {
        try {
          const { status, shift } = await this.#book.rsvp(shiftId, person, PUBLIC_PAGE, now)
          shifts.push({ shift, outcome: outcomeOf(status) })
        } catch (err) {
          if (!(err instanceof Conflict || err instanceof NotFound)) throw err
          shifts.push({ shift: await this.#book.shift(shiftId), outcome: { status: 'refused' } })
        }
      }
      const record: PublicRsvpRecord = {
        rsvp_id: randomUUID(),
        event_id: event.event_id,
        person_id: person,
        shift_ids: shifts.filter(s => s.outcome.status !== 'refused').map(s => s.shift.shift_id),
        name: form.name,
        email: form.email,
        phone: form.phone,
        at: now.toISOString(),
        cancelled_at: null
      }
      await this.#store.table<PublicRsvpRecord>(RSVPS).put(record.rsvp_id, record)
      return { rsvp_id: record.rsvp_id, shifts }
    })
    this.#options.track(this.#confirm(event, form, result, now).catch(this.#options.failed))
    return result
  }

  /** The public RSVPs taken for each event (cancelled ones too), by event id. */
  async countsByEvent (): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    for (const { value } of await this.#store.table<PublicRsvpRecord>(RSVPS).list()) counts.set(value.event_id, (counts.get(value.event_id) ?? 0) + 1)
    return counts
  }

  async rsvp (rsvpId: string): Promise<PublicRsvpRecord | undefined> {
    return await this.#store.table<PublicRsvpRecord>(RSVPS).get(rsvpId)
  }

  /**
   * Cancel every place of the RSVP (each freed place goes to the first on the waitlist free at that
   * time); `already` when it was cancelled before, undefined when there is no such RSVP.
   */
  async cancel (rsvpId: string, now = new Date()): Promise<{ record: PublicRsvpRecord, already: boolean } | undefined> {
    return await actingAs({ by: PUBLIC_PAGE, role: 'system', action: 'public-cancel-rsvp' }, async () => {
      const record = await this.rsvp(rsvpId)
      if (record === undefined) return undefined
      if (record.cancelled_at !== null) return { record, already: true }
      const moved: Array<{ shift: ShiftRecord, person_ids: string[] }> = []
      for (const shiftId of record.shift_ids) {
        try {
          const { shift, promoted } = await this.#book.cancel(shiftId, record.person_id, now)
          if (promoted.length > 0) moved.push({ shift, person_ids: promoted })
        } catch (err) {
          // Staff took the person off the shift meanwhile: nothing left to free.
          if (!(err instanceof NotFound)) throw err
        }
      }
      if (moved.length > 0) this.#options.track(this.#tellPromoted(record.event_id, moved).catch(this.#options.failed))
      return await this.#store.transaction(`${RSVPS}:${rsvpId}`, async tx => {
        const table = tx.table<PublicRsvpRecord>(RSVPS)
        const kept = await table.get(rsvpId) as PublicRsvpRecord
        if (kept.cancelled_at !== null) return { record: kept, already: true }
        const cancelled = { ...kept, cancelled_at: now.toISOString() }
        await table.put(rsvpId, cancelled)
        return { record: cancelled, already: false }
      })
    })
  }

  /** The person with the e-mail address; a new one gets the name and phone given (a phone another person holds is left out). */
  async #person (form: RsvpForm): Promise<string> {
    const people = this.#book.people
    const existing = await people.byEmail(form.email)
    if (existing !== undefined) return existing.person_id
    const person = await people.ensure({ name: form.name, email: form.email }, 'volunteer', PUBLIC_PAGE)
    if (form.phone !== '' && person.phone === '') {
      try {
        await people.save({ person_id: person.person_id, name: person.name, phone: form.phone }, PUBLIC_PAGE)
      } catch (err) {
        if (!(err instanceof Conflict)) throw err
      }
    }
    return person.person_id
  }

  async cancelUrl (rsvpId: string): Promise<string> {
    const url = new URL('/rsvp/cancel', this.#options.appUrl())
    url.searchParams.set('t', await this.#tokens.cancelToken(rsvpId))
    return url.href
  }

  /** Tell each person moved up from a waitlist by a cancellation that they now have a place (one e-mail per shift). */
  async #tellPromoted (eventId: string, moved: ReadonlyArray<{ shift: ShiftRecord, person_ids: string[] }>): Promise<void> {
    const messenger = this.#options.messenger()
    if (messenger === undefined || messenger.enabled?.('email') === false) return
    const event = await this.#book.event(eventId)
    for (const { shift, person_ids: ids } of moved) {
      const people = (await Promise.all(ids.map(async id => await this.#book.people.get(id)))).filter(p => p !== undefined)
      const body = [
        'Hello {{first_name}},',
        '',
        `A place has freed up on ${plain(event.title)}, and it is yours: you were on the waitlist and now have a place.`,
        '',
        `- ${shiftTime(shift)}`,
        '',
        `Where: ${plain(event.location.text)}`,
        '',
        'If you cannot come after all, please cancel (with the link of your confirmation, if you signed up on the event page), so that the next person waiting gets the place.'
      ].join('\n')
      await messenger.send({ channel: 'email', purpose: 'waitlist-promotion', transactional: true, subject: `You have a place: ${plain(event.title)}`, body }, people, PUBLIC_PAGE)
    }
  }

  async #confirm (event: EventRecord, form: RsvpForm, result: RsvpResult, now: Date): Promise<void> {
    const messenger = this.#options.messenger()
    if (messenger === undefined || messenger.enabled?.('email') === false) return
    const person = await this.#book.people.byEmail(form.email)
    if (person === undefined) return
    const held = result.shifts.filter(s => s.outcome.status !== 'refused')
    const host = new URL(this.#options.appUrl()).hostname
    const ics = calendar(held.map(({ shift, outcome }) => ({
      uid: `${result.rsvp_id}-${shift.shift_id}@${host}`,
      starts_at: shift.starts_at,
      ends_at: shift.ends_at,
      summary: event.title,
      description: `${outcome.status === 'confirmed' ? 'You have a place.' : 'You are on the waitlist.'}${event.description === '' ? '' : `\n\n${event.description}`}`,
      location: event.location.text,
      geo: { lat: event.location.lat, lon: event.location.lon },
      confirmed: outcome.status === 'confirmed'
    })), now)
    const lines = result.shifts.map(({ shift, outcome }) => `- ${shiftTime(shift)}: ${outcomeText(outcome)}`)
    const body = [
      'Hello {{first_name}},',
      '',
      `Thank you for signing up for ${plain(event.title)}.`,
      '',
      ...lines,
      '',
      `Where: ${plain(event.location.text)}`,
      ...(held.length > 0
        ? ['', 'The attached calendar file holds your shifts.', '', `Cannot come? Cancel here, so that someone on the waitlist gets your place: ${await this.cancelUrl(result.rsvp_id)}`]
        : [])
    ].join('\n')
    await messenger.send({
      channel: 'email',
      purpose: 'rsvp-confirmation',
      transactional: true,
      subject: `Your RSVP: ${plain(event.title)}`,
      body,
      attachments: held.length > 0 ? [{ filename: 'event.ics', content: ics, contentType: 'text/calendar; charset=utf-8; method=PUBLISH' }] : []
    }, [person], PUBLIC_PAGE)
  }
}

/** What became of a shift, in words (the confirmation page and e-mail). */
export function outcomeText (outcome: ShiftOutcome): string {
  switch (outcome.status) {
    case 'confirmed': return 'you have a place'
    case 'waitlisted': return `the shift is full: you are number ${outcome.position} on its waitlist, and get a place when one frees up`
    case 'refused': return 'we could not sign you up for this shift (it has started or was cancelled, or overlaps another shift you have a place on)'
  }
}
