// The events module's server functions: staff create and change events with their shifts (save-event)
// and show them to everyone on a public page or stop (publish-event),
// everyone signed in lists them with each shift's confirmed count, free places and waitlist length
// (list-events, event-detail) and their own RSVP; volunteers and staff sign up and cancel (rsvp-shift,
// cancel-rsvp; staff also for someone else), staff check people in, read a shift's roster and a
// person's attendance, and send the reminders that are due now. Seat accounting is event-book.ts's.
import { BadRequest, Forbidden, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type Caller, type ModuleFunction, mayCall, instant } from '../../module-kit.js'
import { ATTENDANCE_VIEW, mine, RSVP_VIEW, summary, type EventBook, type EventRecord, type ShiftRecord } from './event-book.js'

const Id = (what: string): ReturnType<typeof Type.String> => Type.String({ minLength: 1, maxLength: 64, description: what })
const Time = (what: string): ReturnType<typeof Type.String> => Type.String({ maxLength: 40, pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})$', description: `${what}: ISO 8601 with an offset, e.g. 2026-06-06T10:00:00+02:00` })
const Skill = Type.String({ minLength: 1, maxLength: 64 })

const ShiftArgs = Type.Object({
  shift_id: Type.Optional(Id('an existing shift of this event to change')),
  starts_at: Time('start'),
  ends_at: Time('end'),
  capacity: Type.Integer({ minimum: 1, maximum: 10_000 }),
  skills: Type.Array(Skill, { maxItems: 20, default: [] }),
  cancelled: Type.Optional(Type.Boolean())
}, { additionalProperties: false })

const SaveArgs = Type.Object({
  event_id: Type.Optional(Id('the event to change')),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 5000, default: '' }),
  location: Type.Object({
    text: Type.String({ minLength: 1, maxLength: 300 }),
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lon: Type.Number({ minimum: -180, maximum: 180 })
  }, { additionalProperties: false }),
  cancelled: Type.Optional(Type.Boolean()),
  shifts: Type.Array(ShiftArgs, { maxItems: 50, default: [] })
}, { additionalProperties: false })

const SomeoneArgs = {
  shift_id: Id('the shift'),
  person_id: Type.Optional(Id('staff: the person to act for (the caller when absent)')),
  person: Type.Optional(Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 })
  }, { additionalProperties: false, description: 'staff: someone to sign up by name and e-mail (found or added to the people)' }))
}

const isStaff = (caller: Caller): boolean => caller.session !== undefined && mayCall(caller.session.role, ['staff'])

export function eventFunctions (book: EventBook): ModuleFunction[] {
  /** The caller's own person, created on their first RSVP from their session's e-mail and name. */
  const self = async (caller: Caller, create: boolean): Promise<string | undefined> => {
    const session = caller.session
    if (session === undefined || session.email === '') {
      if (create) throw new BadRequest('this session has no e-mail address to sign up with')
      return undefined
    }
    if (!create) return (await book.people.byEmail(session.email))?.person_id
    return (await book.people.ensure({ name: session.name === '' ? session.email : session.name, email: session.email }, 'volunteer', session.email)).person_id
  }

  /** The person a call is about: someone else (staff only), or the caller. */
  const subject = async (args: { person_id?: string, person?: { name: string, email: string } }, caller: Caller): Promise<string> => {
    if (args.person_id === undefined && args.person === undefined) return await self(caller, true) as string
    if (!isStaff(caller)) throw new Forbidden('only staff may act for someone else; leave out person_id and person')
    if (args.person_id !== undefined && args.person !== undefined) throw new BadRequest('invalid arguments: give person_id or person, not both')
    if (args.person !== undefined) return (await book.people.ensure(args.person, 'volunteer', caller.session?.email ?? '')).person_id
    const person = await book.people.get(args.person_id as string)
    if (person === undefined) throw new NotFound(`no person "${args.person_id}"`)
    return person.person_id
  }

  /** An event as the caller may see it: its shifts with their counts and the caller's own place; staff also get each shift's roster. */
  const shown = async (event: EventRecord, shifts: ShiftRecord[], caller: Caller, personId: string | undefined, withRoster: boolean): Promise<object> => ({
    ...event,
    shifts: await Promise.all(shifts.map(async shift => ({
      ...summary(shift),
      mine: mine(shift, personId),
      ...(withRoster && RSVP_VIEW.sees('name', caller.session?.role)
        ? { roster: (await book.roster(shift.shift_id)).entries.map(entry => RSVP_VIEW.show(entry, caller.session?.role)) }
        : {})
    })))
  })

  return [
    moduleFunction({
      name: 'save-event',
      args: SaveArgs,
      handler: async (args, caller) => {
        for (const [i, shift] of args.shifts.entries()) {
          instant(`shifts/${i}/starts_at`, shift.starts_at)
          instant(`shifts/${i}/ends_at`, shift.ends_at)
        }
        const event = await book.save(args, caller.session?.email ?? '')
        return await shown(event, await book.shiftsOf(event.event_id), caller, await self(caller, false), false)
      }
    }),
    moduleFunction({
      name: 'publish-event',
      args: Type.Object({
        event_id: Id('the event'),
        published: Type.Boolean({ description: 'true: everyone may see the event and sign up at /e/{slug}; false: the page answers 404' })
      }, { additionalProperties: false }),
      handler: async ({ event_id: id, published }) => {
        const event = await book.publish(id, published)
        return { event_id: event.event_id, published: event.published, slug: event.slug, path: `/e/${event.slug ?? event.event_id}` }
      }
    }),
    moduleFunction({
      name: 'list-events',
      args: Type.Object({
        include_past: Type.Boolean({ default: false, description: 'also events whose shifts have all ended' }),
        include_cancelled: Type.Boolean({ default: false })
      }, { additionalProperties: false }),
      handler: async ({ include_past: past, include_cancelled: cancelled }, caller) => {
        const now = Date.now()
        const all = await book.shifts()
        const personId = await self(caller, false)
        const listed = []
        for (const event of await book.events()) {
          if (event.cancelled && !cancelled) continue
          const shifts = (await book.shiftsOf(event.event_id, all)).filter(s => (cancelled || !s.cancelled) && (past || Date.parse(s.ends_at) > now))
          if (shifts.length === 0 && !past) continue
          listed.push({ first: shifts[0]?.starts_at ?? event.created_at, event: await shown(event, shifts, caller, personId, false) })
        }
        return { events: listed.sort((a, b) => Date.parse(a.first) - Date.parse(b.first)).map(({ event }) => event) }
      }
    }),
    moduleFunction({
      name: 'event-detail',
      args: Type.Object({ event_id: Id('the event') }, { additionalProperties: false }),
      handler: async ({ event_id: id }, caller) => {
        const event = await book.event(id)
        return await shown(event, await book.shiftsOf(id), caller, await self(caller, false), true)
      }
    }),
    moduleFunction({
      name: 'rsvp-shift',
      args: Type.Object(SomeoneArgs, { additionalProperties: false }),
      handler: async (args, caller) => {
        const personId = await subject(args, caller)
        const { status, shift } = await book.rsvp(args.shift_id, personId, caller.session?.email ?? '')
        return { person_id: personId, ...status, shift: summary(shift) }
      }
    }),
    moduleFunction({
      name: 'cancel-rsvp',
      args: Type.Object({ shift_id: SomeoneArgs.shift_id, person_id: SomeoneArgs.person_id }, { additionalProperties: false }),
      handler: async (args, caller) => {
        const personId = await subject(args, caller)
        const { was, promoted, shift } = await book.cancel(args.shift_id, personId)
        return { person_id: personId, was: was.status, promoted: promoted.length, shift: summary(shift) }
      }
    }),
    moduleFunction({
      name: 'check-in',
      args: Type.Object({ shift_id: Id('the shift'), person_id: Id('the person'), undo: Type.Boolean({ default: false, description: 'take a check-in back' }) }, { additionalProperties: false }),
      handler: async ({ shift_id: shiftId, person_id: personId, undo }) => {
        await book.checkIn(shiftId, personId, undo)
        const { shift, entries } = await book.roster(shiftId)
        return { shift: summary(shift), person: entries.find(e => e.person_id === personId) }
      }
    }),
    moduleFunction({
      name: 'shift-roster',
      args: Type.Object({ shift_id: Id('the shift') }, { additionalProperties: false }),
      handler: async ({ shift_id: shiftId }, caller) => {
        const { shift, entries } = await book.roster(shiftId)
        const count = (state: string): number => entries.filter(e => e.state === state).length
        return {
          event: await book.event(shift.event_id),
          shift: summary(shift),
          counts: { confirmed: count('confirmed'), checked_in: count('checked_in'), no_show: count('no_show'), waitlisted: count('waitlisted') },
          confirmed: entries.filter(e => e.state !== 'waitlisted').map(e => RSVP_VIEW.show(e, caller.session?.role)),
          waitlist: entries.filter(e => e.state === 'waitlisted').map(e => RSVP_VIEW.show(e, caller.session?.role))
        }
      }
    }),
    moduleFunction({
      name: 'person-attendance',
      args: Type.Object({ person_id: Id('the person') }, { additionalProperties: false }),
      handler: async ({ person_id: id }, caller) => {
        const person = await book.people.get(id)
        if (person === undefined) throw new NotFound(`no person "${id}"`)
        const counts = (await book.attendance()).get(person.person_id) ?? { attended: 0, no_shows: 0, upcoming: 0 }
        return ATTENDANCE_VIEW.show({ person_id: person.person_id, name: person.name, ...counts }, caller.session?.role)
      }
    }),
    moduleFunction({
      name: 'send-shift-reminders',
      args: Type.Object({}, { additionalProperties: false }),
      handler: async () => ({ reminder_hours: book.reminderHours, sent: await book.sendDueReminders() })
    })
  ]
}
