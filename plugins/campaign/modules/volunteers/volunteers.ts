// Volunteer matching: the roster (save-volunteer, list-volunteers, volunteer-detail) and match-volunteer,
// which ranks volunteers for a task by the score of volunteer-score.ts. One e-mail address is one
// volunteer: saving another volunteer with an address on the roster is refused. Each role sees a volunteer
// through VOLUNTEER_VIEW; for roles that may not see where a volunteer lives, matches are scored on
// the position rounded to COARSE_DEGREES and carry no distance. Matching for a shift (shift_id) takes
// the slots its time covers and its skills when the task names none, and leaves out volunteers
// confirmed on a shift overlapping it (listed as unavailable).
import { randomUUID } from 'node:crypto'
import { BadRequest, Conflict, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, PeopleView, type Alongside, type CampaignStore, type Table, CAMPAIGN_CODES } from '../../module-kit.js'
import type { PeopleDirectory } from '../people/index.js'
import type { EventBook } from '../events/index.js'
import { manifest } from './manifest.js'
import { volunteerScore, type Place } from './volunteer-score.js'

/** What each role sees of a volunteer (the manifest's view). */
export const VOLUNTEER_VIEW = new PeopleView<Volunteer>('volunteer', manifest.views.volunteer)

export interface Volunteer {
  volunteer_id: string
  name: string
  email: string
  skills: string[]
  /** Weekly slots such as `sat-am`. */
  availability: string[]
  location: { lat: number, lon: number }
  updated_at: string
}


const Slot = Type.String({ pattern: '^(mon|tue|wed|thu|fri|sat|sun)-(am|pm|eve)$' })
const Skill = Type.String({ minLength: 1, maxLength: 64 })
const Location = Type.Object({
  lat: Type.Number({ minimum: -90, maximum: 90 }),
  lon: Type.Number({ minimum: -180, maximum: 180 })
}, { additionalProperties: false })

const SaveArgs = Type.Object({
  volunteer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 }),
  skills: Type.Array(Skill, { maxItems: 50, default: [] }),
  availability: Type.Array(Slot, { maxItems: 21, default: [] }),
  location: Location
}, { additionalProperties: false })

const MatchArgs = Type.Object({
  skills: Type.Array(Skill, { maxItems: 50, default: [] }),
  slots: Type.Array(Slot, { maxItems: 21, default: [] }),
  location: Type.Optional(Location),
  shift_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a shift: its slots, skills and place stand in for those not given; volunteers confirmed on an overlapping shift are left out' })),
  max_km: Type.Number({ exclusiveMinimum: 0, maximum: 20000, default: 25 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 })
}, { additionalProperties: false })


/** The grid (in degrees, about 1.1 km of latitude) a volunteer's position is rounded to before scoring for a role that may not see it. */
export const COARSE_DEGREES = 0.01

const coarse = ({ lat, lon }: Place): Place => ({ lat: Math.round(lat / COARSE_DEGREES) * COARSE_DEGREES, lon: Math.round(lon / COARSE_DEGREES) * COARSE_DEGREES })

const VOLUNTEERS = 'volunteers'

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const
/** A slot's part of the day by the hour: before noon am, before 17:00 pm, then eve. */
const part = (hour: number): string => hour < 12 ? 'am' : hour < 17 ? 'pm' : 'eve'

/** The weekly slots (`sat-am`…) a time span touches, read on the wall clock of the offset it was written with. */
export function slotsOf (span: { starts_at: string, ends_at: string }): string[] {
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(span.starts_at)
  const shift = offset === null ? 0 : (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000
  const slots = new Set<string>()
  const end = Date.parse(span.ends_at)
  for (let t = Date.parse(span.starts_at); t < end && slots.size < 21; t += 3_600_000) {
    const wall = new Date(t + shift)
    slots.add(`${DAYS[wall.getUTCDay()]}-${part(wall.getUTCHours())}`)
  }
  return [...slots]
}

export function volunteerFunctions (store: CampaignStore, events?: EventBook, people?: PeopleDirectory): ModuleFunction[] {
  const volunteers = store.table<Volunteer>(VOLUNTEERS)
  const all = async (table = volunteers): Promise<Volunteer[]> => (await table.list()).map(({ value }) => value)
  // The roster's writes with the person's: a transaction holds the roster and, with the people module, the people too.
  const rosterAnd = async (alongside: (volunteer: Volunteer) => Alongside | undefined, fn: (table: Table<Volunteer>) => Promise<Volunteer>): Promise<Volunteer> =>
    await store.transaction(people === undefined ? VOLUNTEERS : [VOLUNTEERS, people.subject], async tx => {
      const volunteer = await fn(tx.table<Volunteer>(VOLUNTEERS))
      await alongside(volunteer)?.write(tx)
      return volunteer
    })
  // One save at a time (across instances too): an e-mail address belongs to one volunteer.
  const saveVolunteer = async (id: string | undefined, fields: Omit<Volunteer, 'volunteer_id' | 'updated_at'>, by: string): Promise<Volunteer> => await rosterAnd(v => people?.withRole(v, 'volunteer', by), async table => {
    if (id !== undefined && !await table.has(id)) throw new NotFound(`no volunteer "${id}"`)
    const email = fields.email.toLowerCase()
    const holder = (await all(table)).find(v => v.email.toLowerCase() === email && v.volunteer_id !== id)
    if (holder !== undefined) throw new Conflict(`${holder.name} (volunteer_id ${holder.volunteer_id}) has the e-mail ${fields.email} already; save with that volunteer_id to update them`, { code: CAMPAIGN_CODES.EMAIL_TAKEN })
    const volunteer: Volunteer = { volunteer_id: id ?? randomUUID(), ...fields, updated_at: new Date().toISOString() }
    await table.put(volunteer.volunteer_id, volunteer)
    return volunteer
  })
  return [
    moduleFunction({
      name: 'save-volunteer',
      args: SaveArgs,
      // A volunteer is one of the campaign's people, with the volunteer role.
      handler: async ({ volunteer_id: id, ...fields }, { session }) => VOLUNTEER_VIEW.show(await saveVolunteer(id, fields, session?.email ?? ''), session?.role)
    }),
    moduleFunction({
      name: 'list-volunteers',
      args: Type.Object({ skill: Type.Optional(Skill) }, { additionalProperties: false }),
      handler: async ({ skill }, { session }) => {
        VOLUNTEER_VIEW.refuseUnseen(session?.role, 'filter list-volunteers', { skill }, { skill: ['skills'] })
        return {
          volunteers: (await all())
            .filter(v => skill === undefined || v.skills.some(s => s.toLowerCase() === skill.toLowerCase()))
            .sort((a, b) => a.name.localeCompare(b.name))
            .map(v => VOLUNTEER_VIEW.show(v, session?.role))
        }
      }
    }),
    moduleFunction({
      name: 'delete-volunteer',
      args: Type.Object({ volunteer_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      // Off the roster, and the person no longer has the volunteer role; the record stays in the audit log.
      handler: async ({ volunteer_id: id }) => {
        await rosterAnd(v => people?.withoutRole(v.email, 'volunteer'), async table => {
          const volunteer = await table.get(id)
          if (volunteer === undefined) throw new NotFound(`no volunteer "${id}"`)
          await table.remove(id)
          return volunteer
        })
        return { deleted: id }
      }
    }),
    moduleFunction({
      name: 'volunteer-detail',
      args: Type.Object({ volunteer_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      handler: async ({ volunteer_id: id }, { session }) => {
        const volunteer = await volunteers.get(id)
        if (volunteer === undefined) throw new NotFound(`no volunteer "${id}"`)
        return VOLUNTEER_VIEW.show(volunteer, session?.role)
      }
    }),
    moduleFunction({
      name: 'match-volunteer',
      args: MatchArgs,
      handler: async ({ limit, shift_id: shiftId, ...asked }, { session }) => {
        const exact = VOLUNTEER_VIEW.sees('location', session?.role)
        const forShift = shiftId === undefined || events === undefined ? undefined : await shiftTask(events, shiftId)
        const location = asked.location ?? forShift?.location
        if (location === undefined) throw new BadRequest('invalid arguments: /location: give a location, or a shift_id whose event has one')
        const task = {
          ...asked,
          location,
          skills: asked.skills.length > 0 ? asked.skills : forShift?.skills ?? [],
          slots: asked.slots.length > 0 ? asked.slots : forShift?.slots ?? []
        }
        const roster = await all()
        const unavailable = roster.filter(v => forShift?.busyEmails.has(v.email.toLowerCase()) === true)
        return {
          matches: roster
            .filter(v => !unavailable.includes(v))
            .map(v => ({ volunteer_id: v.volunteer_id, name: v.name, ...volunteerScore(exact ? v : { ...v, location: coarse(v.location) }, task) }))
            .sort((a, b) => b.score - a.score || a.distance_km - b.distance_km || a.name.localeCompare(b.name))
            .slice(0, limit)
            .map(({ distance_km: km, ...match }) => exact ? { ...match, distance_km: km } : match),
          ...(forShift === undefined
            ? {}
            : {
                shift: { shift_id: shiftId, skills: task.skills, slots: task.slots },
                unavailable: unavailable.map(v => ({ volunteer_id: v.volunteer_id, name: v.name, shift_id: forShift.busyEmails.get(v.email.toLowerCase()) as string })).sort((a, b) => a.name.localeCompare(b.name))
              })
        }
      }
    })
  ]
}

/** What a shift asks of a match: its slots, its skills, its event's place, and who is confirmed on a shift overlapping it (by e-mail, with that shift). */
async function shiftTask (events: EventBook, shiftId: string): Promise<{ slots: string[], skills: string[], location: Place, busyEmails: Map<string, string> }> {
  const shift = await events.shift(shiftId)
  const event = await events.event(shift.event_id)
  const busyEmails = new Map<string, string>()
  for (const [personId, heldShift] of await events.busy(shift)) {
    const person = await events.people.get(personId)
    if (person !== undefined && person.email !== '') busyEmails.set(person.email.toLowerCase(), heldShift)
  }
  return { slots: slotsOf(shift), skills: shift.skills, location: { lat: event.location.lat, lon: event.location.lon }, busyEmails }
}
