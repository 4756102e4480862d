// Events and their shifts, RSVPs, the waitlist, check-in and reminders. An event is one record; a
// shift is one record holding its seats (confirmed people in order, then the waitlist), so every change
// of a shift's seats (an RSVP, a cancellation with its promotion, a capacity change, a check-in, a
// reminder claim) is one store transaction whose subject is the shift id: concurrent RSVPs, on this
// instance or on others sharing PostgreSQL, never overbook. One that may confirm someone also holds
// that person, so no one is seated on two overlapping shifts at once. People are kept by person_id (the people
// directory); no-shows are computed: a confirmed person not checked in when the shift has ended.
import { randomUUID } from 'node:crypto'
import { BadRequest, Conflict, NotFound, Unavailable } from '../../../../kernel/index.js'
import { type CampaignStore, type Transaction, CAMPAIGN_CODES, PeopleView } from '../../module-kit.js'
import type { Person, PeopleDirectory } from '../people/index.js'
import { manifest } from './manifest.js'

/** What each role sees of a person on a shift's roster and of a person's attendance (the manifest's views). */
export const RSVP_VIEW = new PeopleView<RosterEntry>('rsvp', manifest.views.rsvp)
export const ATTENDANCE_VIEW = new PeopleView<Attendance>('attendance', manifest.views.attendance)

export const EVENTS = 'events'
export const SHIFTS = 'event-shifts'

export interface EventLocation { text: string, lat: number, lon: number }

export interface EventRecord {
  event_id: string
  title: string
  description: string
  location: EventLocation
  cancelled: boolean
  /** Shown to everyone at /e/{slug} (public-routes.ts); absent on events saved before publishing existed. */
  published?: boolean
  /** The public page's name, given when first published: the title's words and the id's first characters. */
  slug?: string
  created_by: string
  created_at: string
  updated_at: string
}

/** Whether a seat's reminder went out: claimed (`sending`) before the message is sent, `sent` after. */
export interface ReminderMark { state: 'sending' | 'sent', at: string, send_id: string | null }

export interface Seat {
  person_id: string
  rsvp_at: string
  /** Who signed the person up (themselves, or a staff member). */
  added_by: string
  checked_in_at: string | null
  reminder: ReminderMark | null
}

export interface ShiftRecord {
  shift_id: string
  event_id: string
  /** ISO 8601 with its offset, as given: the wall-clock time names the shift's slot. */
  starts_at: string
  ends_at: string
  capacity: number
  skills: string[]
  cancelled: boolean
  /** Confirmed people in the order they got their place; may exceed capacity after the capacity was lowered. */
  confirmed: Seat[]
  /** People waiting, first come first promoted. */
  waitlist: Seat[]
  updated_at: string
}

export interface ShiftFields { shift_id?: string, starts_at: string, ends_at: string, capacity: number, skills: string[], cancelled?: boolean }
export interface EventFields { event_id?: string, title: string, description: string, location: EventLocation, cancelled?: boolean, shifts: ShiftFields[] }

/** The counts everyone sees of a shift. */
export interface ShiftSummary extends Omit<ShiftRecord, 'confirmed' | 'waitlist' | 'updated_at'> {
  confirmed_count: number
  free: number
  waitlist_count: number
}

/** The caller's own place on a shift. */
export interface MyRsvp { status: 'confirmed' | 'waitlisted', position: number | null, checked_in: boolean }

export type SeatState = 'confirmed' | 'checked_in' | 'no_show'

/** A confirmed or waiting person on a shift's roster (what staff see). */
export interface RosterEntry {
  person_id: string
  name: string
  email: string
  state: SeatState | 'waitlisted'
  /** 1-based place on the waitlist; null when confirmed. */
  position: number | null
  rsvp_at: string
  checked_in_at: string | null
  reminded_at: string | null
  /** The person's attended shifts and no-shows over every shift that has ended. */
  attended: number
  no_shows: number
  added_by: string
}

export interface Attendance { person_id: string, name: string, attended: number, no_shows: number, upcoming: number }

/** What the book needs of the people directory. */
export type EventPeople = Pick<PeopleDirectory, 'get' | 'byEmail' | 'ensure' | 'save' | 'noteActivity'>

/** One message to several people (the sending module's Messenger): a reminder or an RSVP's confirmation is transactional (no campaign consent needed), and do-not-contact and suppression hold. */
export interface ReminderMessenger {
  /** Whether the channel is configured (reminders wait while e-mail is off). */
  enabled?(channel: 'email'): boolean
  send(message: { channel: 'email', subject: string, body: string, purpose: string, transactional: boolean, attachments?: ReadonlyArray<{ filename: string, content: string, contentType: string }> }, recipients: Person[], by: string): Promise<{ send_id: string, sent: unknown, failed: unknown, skipped: unknown }>
}

/** What one reminder run sent for one shift. */
export interface ReminderSent {
  shift_id: string
  event_id: string
  title: string
  starts_at: string
  person_ids: string[]
  send_id: string | null
  sent: unknown
  failed: unknown
  skipped: unknown
  error?: string
}

export interface EventBookOptions {
  people: EventPeople
  /** How to reach people; reminders wait while there is none. */
  messenger?: () => ReminderMessenger | undefined
  /** How long before a shift starts its reminder goes out. */
  reminderHours: number
}

const at = (text: string): number => Date.parse(text)
const overlaps = (a: { starts_at: string, ends_at: string }, b: { starts_at: string, ends_at: string }): boolean =>
  at(a.starts_at) < at(b.ends_at) && at(b.starts_at) < at(a.ends_at)
const live = (shift: ShiftRecord): boolean => !shift.cancelled
const hasEnded = (shift: ShiftRecord, now: Date): boolean => at(shift.ends_at) <= now.getTime()

export function summary (shift: ShiftRecord): ShiftSummary {
  const { confirmed, waitlist, updated_at: _updated, ...fields } = shift
  return { ...fields, confirmed_count: confirmed.length, free: Math.max(0, shift.capacity - confirmed.length), waitlist_count: waitlist.length }
}

export function mine (shift: ShiftRecord, personId: string | undefined): MyRsvp | null {
  if (personId === undefined) return null
  const seat = shift.confirmed.find(s => s.person_id === personId)
  if (seat !== undefined) return { status: 'confirmed', position: null, checked_in: seat.checked_in_at !== null }
  const waiting = shift.waitlist.findIndex(s => s.person_id === personId)
  return waiting < 0 ? null : { status: 'waitlisted', position: waiting + 1, checked_in: false }
}

/** A confirmed seat's state: checked in, or a no-show once the shift has ended, else confirmed. */
export const seatState = (shift: ShiftRecord, seat: Seat, now: Date): SeatState =>
  seat.checked_in_at !== null ? 'checked_in' : hasEnded(shift, now) ? 'no_show' : 'confirmed'

/** The time of a shift as people read it: "Sat 2026-06-06 10:00–13:00" in the offset it was given with. */
export function shiftTime (shift: { starts_at: string, ends_at: string }): string {
  const wall = (text: string): string => text.slice(0, 16).replace('T', ' ')
  const day = new Date(`${shift.starts_at.slice(0, 10)}T00:00:00Z`).toLocaleDateString('en-US', { weekday: 'short', timeZone: 'UTC' })
  const offset = /(Z|[+-]\d{2}:\d{2})$/.exec(shift.starts_at)?.[1] ?? 'Z'
  const end = shift.ends_at.slice(0, 10) === shift.starts_at.slice(0, 10) ? wall(shift.ends_at).slice(11) : wall(shift.ends_at)
  return `${day} ${wall(shift.starts_at)}–${end}${offset === 'Z' ? ' UTC' : ` (UTC${offset})`}`
}

/** A public page's name: the title's first words in lower case and the id's first 6 characters (unique with them). */
export function slugOf (event: Pick<EventRecord, 'title' | 'event_id'>): string {
  const words = event.title.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '')
  const tail = event.event_id.replace(/[^a-z0-9]/gi, '').slice(0, 6).toLowerCase()
  return words === '' ? tail : `${words}-${tail}`
}

/** The subject every transaction that may confirm this person holds (their other shifts are read for overlaps). */
const seatHolder = (personId: string): string => `seats-of:${personId}`
/** How long a reminder claim holds: a run still sending after this long is taken for dead (nodemailer's socket time-out is 10 minutes). */
export const REMINDER_CLAIM_LEASE_MS = 30 * 60_000
/** How often a seating transaction runs again when the waitlist grew meanwhile. */
const SEATING_ATTEMPTS = 5
/** The waitlist has people the transaction does not hold: run it again (503 when that keeps happening). */
class WaitlistGrew extends Unavailable {}

export class EventBook {
  readonly #store: CampaignStore
  readonly #options: EventBookOptions

  constructor (store: CampaignStore, options: EventBookOptions) {
    this.#store = store
    this.#options = options
  }

  get people (): EventPeople {
    return this.#options.people
  }

  get reminderHours (): number {
    return this.#options.reminderHours
  }

  async event (eventId: string): Promise<EventRecord> {
    const event = await this.#store.table<EventRecord>(EVENTS).get(eventId)
    if (event === undefined) throw new NotFound(`no event "${eventId}"`)
    return event
  }

  async shift (shiftId: string): Promise<ShiftRecord> {
    const shift = await this.#store.table<ShiftRecord>(SHIFTS).get(shiftId)
    if (shift === undefined) throw new NotFound(`no shift "${shiftId}"`)
    return shift
  }

  async events (): Promise<EventRecord[]> {
    return (await this.#store.table<EventRecord>(EVENTS).list()).map(({ value }) => value)
  }

  async shifts (): Promise<ShiftRecord[]> {
    return (await this.#store.table<ShiftRecord>(SHIFTS).list()).map(({ value }) => value)
  }

  /** The event's shifts by start. */
  async shiftsOf (eventId: string, all?: ShiftRecord[]): Promise<ShiftRecord[]> {
    return (all ?? await this.shifts()).filter(s => s.event_id === eventId).sort((a, b) => at(a.starts_at) - at(b.starts_at) || a.shift_id.localeCompare(b.shift_id))
  }

  /**
   * Create an event with its shifts, or change one: shifts named by shift_id are changed, new ones
   * added, shifts not listed left as they are. Lowering a capacity keeps everyone confirmed (new RSVPs
   * wait); raising it promotes from the waitlist. Cancelling the event cancels its shifts.
   */
  async save (fields: EventFields, by: string, now = new Date()): Promise<EventRecord> {
    const stamp = now.toISOString()
    for (const [i, shift] of fields.shifts.entries()) {
      if (!(at(shift.ends_at) > at(shift.starts_at))) throw new BadRequest(`invalid arguments: /shifts/${i}/ends_at: comes before starts_at`)
    }
    const ids = fields.shifts.map(s => s.shift_id).filter((id): id is string => id !== undefined)
    if (new Set(ids).size !== ids.length) throw new BadRequest('invalid arguments: /shifts: a shift_id is listed twice')
    const before = fields.event_id === undefined ? undefined : await this.event(fields.event_id)
    for (const id of ids) {
      const shift = await this.shift(id)
      if (shift.event_id !== before?.event_id) throw new NotFound(`no shift "${id}" in this event`)
    }
    const event: EventRecord = {
      event_id: before?.event_id ?? randomUUID(),
      title: fields.title,
      description: fields.description,
      location: fields.location,
      cancelled: fields.cancelled ?? before?.cancelled ?? false,
      published: before?.published ?? false,
      ...(before?.slug !== undefined ? { slug: before.slug } : {}),
      created_by: before?.created_by ?? by,
      created_at: before?.created_at ?? stamp,
      updated_at: stamp
    }
    await this.#store.transaction(`event:${event.event_id}`, async tx => { await tx.table<EventRecord>(EVENTS).put(event.event_id, event) })
    const listed = new Set(ids)
    const changes: Array<[string | undefined, ShiftFields | undefined]> = [
      ...fields.shifts.map(s => [s.shift_id, s] as [string | undefined, ShiftFields]),
      // A cancelled event cancels every shift it has.
      ...(event.cancelled ? (await this.shiftsOf(event.event_id)).filter(s => !listed.has(s.shift_id)).map(s => [s.shift_id, undefined] as [string, undefined]) : [])
    ]
    for (const [id, change] of changes) {
      const shiftId = id ?? randomUUID()
      await this.#seating(shiftId, [], async (tx, held) => {
        const table = tx.table<ShiftRecord>(SHIFTS)
        const old = await table.get(shiftId)
        const shift: ShiftRecord = {
          shift_id: shiftId,
          event_id: event.event_id,
          starts_at: change?.starts_at ?? old?.starts_at ?? stamp,
          ends_at: change?.ends_at ?? old?.ends_at ?? stamp,
          capacity: change?.capacity ?? old?.capacity ?? 1,
          skills: change?.skills ?? old?.skills ?? [],
          cancelled: event.cancelled || (change?.cancelled ?? old?.cancelled ?? false),
          confirmed: old?.confirmed ?? [],
          waitlist: old?.waitlist ?? [],
          updated_at: stamp
        }
        if (!shift.cancelled) await this.#promote(tx, shift, held, now)
        await table.put(shiftId, shift)
      })
    }
    return event
  }

  /** Show the event to everyone at its public page, or stop showing it; the page keeps its slug either way. */
  async publish (eventId: string, published: boolean, now = new Date()): Promise<EventRecord> {
    return await this.#store.transaction(`event:${eventId}`, async tx => {
      const table = tx.table<EventRecord>(EVENTS)
      const event = await table.get(eventId)
      if (event === undefined) throw new NotFound(`no event "${eventId}"`)
      const changed: EventRecord = { ...event, published, slug: event.slug ?? slugOf(event), updated_at: now.toISOString() }
      await table.put(eventId, changed)
      return changed
    })
  }

  /** The published event a public page names by its slug or id; undefined for any other. */
  async publishedEvent (ref: string): Promise<EventRecord | undefined> {
    const byId = await this.#store.table<EventRecord>(EVENTS).get(ref)
    const event = byId ?? (await this.events()).find(e => e.slug === ref)
    return event?.published === true ? event : undefined
  }

  /**
   * Sign `person` up for the shift: confirmed while places are free, else at the end of the waitlist.
   * Signing up again answers the place the person has. 409 when the shift is cancelled or has started,
   * or when the person is confirmed on another shift overlapping this one.
   */
  async rsvp (shiftId: string, personId: string, by: string, now = new Date()): Promise<{ status: MyRsvp, shift: ShiftRecord }> {
    const result = await this.#store.transaction([shiftId, seatHolder(personId)], async tx => {
      const table = tx.table<ShiftRecord>(SHIFTS)
      const shift = await table.get(shiftId)
      if (shift === undefined) throw new NotFound(`no shift "${shiftId}"`)
      const had = mine(shift, personId)
      if (had !== null) return { status: had, shift }
      if (shift.cancelled) throw new Conflict(`shift ${shiftId} is cancelled`, { code: CAMPAIGN_CODES.SHIFT_CLOSED })
      if (at(shift.starts_at) <= now.getTime()) throw new Conflict(`shift ${shiftId} has started; RSVPs are closed`, { code: CAMPAIGN_CODES.SHIFT_CLOSED })
      const clash = await this.#clash(tx, shift, personId)
      if (clash !== undefined) {
        const title = (await this.#store.table<EventRecord>(EVENTS).get(clash.event_id))?.title ?? 'another event'
        throw new Conflict(`already confirmed on "${title}" ${shiftTime(clash)} (shift_id ${clash.shift_id}), which overlaps this shift`, { code: CAMPAIGN_CODES.SHIFT_OVERLAP })
      }
      const seat: Seat = { person_id: personId, rsvp_at: now.toISOString(), added_by: by, checked_in_at: null, reminder: null }
      // People still waiting while places are free are confirmed elsewhere at this time: they keep waiting.
      const free = shift.confirmed.length < shift.capacity
      const changed = { ...shift, confirmed: free ? [...shift.confirmed, seat] : shift.confirmed, waitlist: free ? shift.waitlist : [...shift.waitlist, seat], updated_at: now.toISOString() }
      await table.put(shiftId, changed)
      return { status: mine(changed, personId) as MyRsvp, shift: changed }
    })
    await this.people.noteActivity(personId, now.toISOString())
    return result
  }

  /** Take the person off the shift; a freed place goes to the first on the waitlist who is free at that time. */
  async cancel (shiftId: string, personId: string, now = new Date()): Promise<{ was: MyRsvp, promoted: string[], shift: ShiftRecord }> {
    return await this.#seating(shiftId, [personId], async (tx, held) => {
      const table = tx.table<ShiftRecord>(SHIFTS)
      const shift = await table.get(shiftId)
      if (shift === undefined) throw new NotFound(`no shift "${shiftId}"`)
      const was = mine(shift, personId)
      if (was === null) throw new NotFound(`person ${personId} has no RSVP on shift ${shiftId}`)
      const changed: ShiftRecord = { ...shift, confirmed: shift.confirmed.filter(s => s.person_id !== personId), waitlist: shift.waitlist.filter(s => s.person_id !== personId), updated_at: now.toISOString() }
      const promoted = shift.cancelled || at(shift.starts_at) <= now.getTime() ? [] : await this.#promote(tx, changed, held, now)
      await table.put(shiftId, changed)
      return { was, promoted, shift: changed }
    })
  }

  /** Record that a confirmed person came (or, with `undo`, take it back). */
  async checkIn (shiftId: string, personId: string, undo: boolean, now = new Date()): Promise<ShiftRecord> {
    const shift = await this.#store.transaction(shiftId, async tx => {
      const table = tx.table<ShiftRecord>(SHIFTS)
      const shift = await table.get(shiftId)
      if (shift === undefined) throw new NotFound(`no shift "${shiftId}"`)
      const seat = shift.confirmed.find(s => s.person_id === personId)
      if (seat === undefined) {
        const waiting = shift.waitlist.some(s => s.person_id === personId)
        throw new Conflict(waiting ? `person ${personId} is on the waitlist of shift ${shiftId}, not confirmed` : `person ${personId} has no RSVP on shift ${shiftId}`, { code: CAMPAIGN_CODES.NOT_CONFIRMED })
      }
      const changed = { ...shift, confirmed: shift.confirmed.map(s => s === seat ? { ...s, checked_in_at: undo ? null : s.checked_in_at ?? now.toISOString() } : s), updated_at: now.toISOString() }
      await table.put(shiftId, changed)
      return changed
    })
    if (!undo) await this.people.noteActivity(personId, now.toISOString())
    return shift
  }

  /** Attended shifts and no-shows of every person with an ended shift, and their upcoming confirmed shifts. */
  async attendance (now = new Date(), all?: ShiftRecord[]): Promise<Map<string, { attended: number, no_shows: number, upcoming: number }>> {
    const counts = new Map<string, { attended: number, no_shows: number, upcoming: number }>()
    for (const shift of (all ?? await this.shifts()).filter(live)) {
      for (const seat of shift.confirmed) {
        const count = counts.get(seat.person_id) ?? { attended: 0, no_shows: 0, upcoming: 0 }
        const state = seatState(shift, seat, now)
        if (!hasEnded(shift, now)) count.upcoming++
        else if (state === 'checked_in') count.attended++
        else count.no_shows++
        counts.set(seat.person_id, count)
      }
    }
    return counts
  }

  /** The shift's roster: confirmed people (checked in, no-show or confirmed) then the waitlist in order. */
  async roster (shiftId: string, now = new Date()): Promise<{ shift: ShiftRecord, entries: RosterEntry[] }> {
    const all = await this.shifts()
    const shift = all.find(s => s.shift_id === shiftId)
    if (shift === undefined) throw new NotFound(`no shift "${shiftId}"`)
    const counts = await this.attendance(now, all)
    const entry = async (seat: Seat, state: RosterEntry['state'], position: number | null): Promise<RosterEntry> => {
      const person = await this.people.get(seat.person_id)
      const { attended, no_shows: noShows } = counts.get(seat.person_id) ?? { attended: 0, no_shows: 0 }
      return {
        person_id: seat.person_id,
        name: person?.name ?? '(removed)',
        email: person?.email ?? '',
        state,
        position,
        rsvp_at: seat.rsvp_at,
        checked_in_at: seat.checked_in_at,
        reminded_at: seat.reminder?.state === 'sent' ? seat.reminder.at : null,
        attended,
        no_shows: noShows,
        added_by: seat.added_by
      }
    }
    const entries = [
      ...await Promise.all(shift.confirmed.map(async seat => await entry(seat, seatState(shift, seat, now), null))),
      ...await Promise.all(shift.waitlist.map(async (seat, i) => await entry(seat, 'waitlisted', i + 1)))
    ]
    return { shift, entries }
  }

  /** Confirmed people on live shifts overlapping the time, by person_id, with the shift each holds. */
  async busy (window: { starts_at: string, ends_at: string }): Promise<Map<string, string>> {
    const busy = new Map<string, string>()
    for (const shift of (await this.shifts()).filter(s => live(s) && overlaps(s, window))) {
      for (const seat of shift.confirmed) busy.set(seat.person_id, shift.shift_id)
    }
    return busy
  }

  /**
   * Send each confirmed person on a shift starting within `reminderHours` their reminder. Seats are
   * claimed in the shift's transaction before the message goes out (so another run, here or on
   * another instance, skips them) and marked sent with the send's id after; a send that throws gives
   * its claims back for the next run. A claim older than REMINDER_CLAIM_LEASE_MS was made by a run
   * that died before it marked the seat (a killed process): it is claimed again, so a reminder is
   * sent at least once — twice only when the process died between the server's acceptance and the
   * mark. A run after downtime sends what is due for shifts not yet started.
   */
  async sendDueReminders (now = new Date()): Promise<ReminderSent[]> {
    const messenger = this.#options.messenger?.()
    if (messenger === undefined || messenger.enabled?.('email') === false) return []
    const horizon = now.getTime() + this.reminderHours * 3_600_000
    const unreminded = (seat: Seat): boolean => seat.reminder === null || (seat.reminder.state === 'sending' && at(seat.reminder.at) <= now.getTime() - REMINDER_CLAIM_LEASE_MS)
    const due = (await this.shifts()).filter(s => live(s) && at(s.starts_at) > now.getTime() && at(s.starts_at) <= horizon && s.confirmed.some(unreminded))
    const runs: ReminderSent[] = []
    const claim: ReminderMark = { state: 'sending', at: now.toISOString(), send_id: null }
    for (const candidate of due) {
      const claimed = await this.#store.transaction(candidate.shift_id, async tx => {
        const table = tx.table<ShiftRecord>(SHIFTS)
        const shift = await table.get(candidate.shift_id)
        if (shift === undefined || !live(shift) || at(shift.starts_at) <= now.getTime()) return { shift, ids: [] }
        const ids = shift.confirmed.filter(unreminded).map(seat => seat.person_id)
        if (ids.length === 0) return { shift, ids }
        await table.put(shift.shift_id, { ...shift, confirmed: shift.confirmed.map(seat => ids.includes(seat.person_id) ? { ...seat, reminder: claim } : seat) })
        return { shift, ids }
      })
      if (claimed.shift === undefined || claimed.ids.length === 0) continue
      const shift = claimed.shift
      const event = await this.#store.table<EventRecord>(EVENTS).get(shift.event_id)
      const title = event?.title ?? 'Your shift'
      const recipients = (await Promise.all(claimed.ids.map(async id => await this.people.get(id)))).filter((p): p is Person => p !== undefined)
      const run: ReminderSent = { shift_id: shift.shift_id, event_id: shift.event_id, title, starts_at: shift.starts_at, person_ids: claimed.ids, send_id: null, sent: 0, failed: 0, skipped: 0 }
      try {
        const result = await messenger.send({ channel: 'email', purpose: 'shift-reminder', transactional: true, subject: `Reminder: ${plain(title)}, ${shiftTime(shift)}`, body: reminderBody(event, shift) }, recipients, 'system')
        Object.assign(run, { send_id: result.send_id, sent: result.sent, failed: result.failed, skipped: result.skipped })
        await this.#mark(shift.shift_id, claim, { state: 'sent', at: now.toISOString(), send_id: result.send_id })
      } catch (err) {
        run.error = err instanceof Error ? err.message : String(err)
        await this.#mark(shift.shift_id, claim, null)
      }
      runs.push(run)
    }
    return runs
  }

  /** The seats this run claimed (a later run's claim of the same seats is left alone) marked sent, or given back. */
  async #mark (shiftId: string, claim: ReminderMark, mark: ReminderMark | null): Promise<void> {
    await this.#store.transaction(shiftId, async tx => {
      const table = tx.table<ShiftRecord>(SHIFTS)
      const shift = await table.get(shiftId)
      if (shift === undefined) return
      await table.put(shiftId, { ...shift, confirmed: shift.confirmed.map(seat => seat.reminder?.state === 'sending' && seat.reminder.at === claim.at ? { ...seat, reminder: mark } : seat) })
    })
  }

  /** A live shift other than `shift` overlapping it on which the person is confirmed. */
  async #clash (tx: Transaction, shift: ShiftRecord, personId: string): Promise<ShiftRecord | undefined> {
    return (await tx.table<ShiftRecord>(SHIFTS).list()).map(({ value }) => value)
      .find(other => other.shift_id !== shift.shift_id && live(other) && overlaps(other, shift) && other.confirmed.some(s => s.person_id === personId))
  }

  /** Fill free places from the waitlist in order, skipping people confirmed on an overlapping shift (they keep waiting); the ids promoted. */
  /**
   * A transaction on the shift that may confirm people from its waitlist: it holds the shift and each
   * of those people (as an RSVP does), so no one is confirmed on two overlapping shifts at once. The
   * waitlist is read first; when it grew before the transaction began, it runs again with the newcomers.
   */
  async #seating<T> (shiftId: string, personIds: readonly string[], fn: (tx: Transaction, held: ReadonlySet<string>) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const waiting = (await this.#store.table<ShiftRecord>(SHIFTS).get(shiftId))?.waitlist.map(seat => seat.person_id) ?? []
      const held = new Set([...personIds, ...waiting])
      try {
        return await this.#store.transaction([shiftId, ...[...held].map(seatHolder)], async tx => await fn(tx, held))
      } catch (err) {
        if (!(err instanceof WaitlistGrew) || attempt === SEATING_ATTEMPTS) throw err
      }
    }
  }

  async #promote (tx: Transaction, shift: ShiftRecord, held: ReadonlySet<string>, now: Date): Promise<string[]> {
    if (shift.waitlist.some(seat => !held.has(seat.person_id))) throw new WaitlistGrew(`the waitlist of shift ${shift.shift_id} kept changing; try again`)
    const promoted: string[] = []
    const waiting: Seat[] = []
    for (const seat of shift.waitlist) {
      if (shift.confirmed.length < shift.capacity && await this.#clash(tx, shift, seat.person_id) === undefined) {
        shift.confirmed = [...shift.confirmed, seat]
        promoted.push(seat.person_id)
      } else {
        waiting.push(seat)
      }
    }
    shift.waitlist = waiting
    if (promoted.length > 0) shift.updated_at = now.toISOString()
    return promoted
  }
}

/** Text written by staff, without the braces of merge fields (the messenger fills `{{name}}` and refuses unknown ones). */
export const plain = (text: string): string => text.replace(/[{}]/g, '')

function reminderBody (event: EventRecord | undefined, shift: ShiftRecord): string {
  return [
    'Hello {{first_name}},',
    '',
    `You are signed up for ${plain(event?.title ?? 'a shift')}.`,
    `When: ${shiftTime(shift)}`,
    ...(event !== undefined ? [`Where: ${plain(event.location.text)}`] : []),
    ...(shift.skills.length > 0 ? [`Skills wanted: ${plain(shift.skills.join(', '))}`] : []),
    ...(event !== undefined && event.description !== '' ? ['', plain(event.description)] : []),
    '',
    'If you cannot come, cancel your RSVP on the events page so someone on the waitlist gets your place.'
  ].join('\n')
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** Events, their shifts and RSVPs (matching reads who is busy when). */
    events: EventBook
  }
}
