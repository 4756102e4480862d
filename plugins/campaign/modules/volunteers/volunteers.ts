// Volunteer matching: the roster (save-volunteer, list-volunteers, volunteer-detail) and match-volunteer,
// which ranks volunteers for a task by the score of volunteer-score.ts. One e-mail address is one
// volunteer: saving another volunteer with an address on the roster is refused. Each role sees a volunteer
// through VOLUNTEER_VIEW; for roles that may not see where a volunteer lives, matches are scored on
// the position rounded to COARSE_DEGREES and carry no distance.
import { randomUUID } from 'node:crypto'
import { Conflict, NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction } from '../../functions.js'
import { VOLUNTEER_VIEW } from '../../people.js'
import type { CampaignStore } from '../../store/contract.js'
import { volunteerScore, type Place } from './volunteer-score.js'

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
  location: Location,
  max_km: Type.Number({ exclusiveMinimum: 0, maximum: 20000, default: 25 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 })
}, { additionalProperties: false })


/** The grid (in degrees, about 1.1 km of latitude) a volunteer's position is rounded to before scoring for a role that may not see it. */
export const COARSE_DEGREES = 0.01

const coarse = ({ lat, lon }: Place): Place => ({ lat: Math.round(lat / COARSE_DEGREES) * COARSE_DEGREES, lon: Math.round(lon / COARSE_DEGREES) * COARSE_DEGREES })

const VOLUNTEERS = 'volunteers'

export function volunteerFunctions (store: CampaignStore): ModuleFunction[] {
  const volunteers = store.table<Volunteer>(VOLUNTEERS)
  const all = async (table = volunteers): Promise<Volunteer[]> => (await table.list()).map(({ value }) => value)
  return [
    moduleFunction({
      name: 'save-volunteer',
      args: SaveArgs,
      // One save at a time (across instances too): an e-mail address belongs to one volunteer.
      handler: async ({ volunteer_id: id, ...fields }, { session }) => await store.transaction(VOLUNTEERS, async tx => {
        const table = tx.table<Volunteer>(VOLUNTEERS)
        if (id !== undefined && !await table.has(id)) throw new NotFound(`no volunteer "${id}"`)
        const email = fields.email.toLowerCase()
        const holder = (await all(table)).find(v => v.email.toLowerCase() === email && v.volunteer_id !== id)
        if (holder !== undefined) throw new Conflict(`${holder.name} (volunteer_id ${holder.volunteer_id}) has the e-mail ${fields.email} already; save with that volunteer_id to update them`, { code: 'BERTH_EMAIL_TAKEN' })
        const volunteer: Volunteer = { volunteer_id: id ?? randomUUID(), ...fields, updated_at: new Date().toISOString() }
        await table.put(volunteer.volunteer_id, volunteer)
        return VOLUNTEER_VIEW.show(volunteer, session?.role)
      })
    }),
    moduleFunction({
      name: 'list-volunteers',
      args: Type.Object({ skill: Type.Optional(Skill) }, { additionalProperties: false }),
      handler: async ({ skill }, { session }) => ({
        volunteers: (await all())
          .filter(v => skill === undefined || v.skills.some(s => s.toLowerCase() === skill.toLowerCase()))
          .sort((a, b) => a.name.localeCompare(b.name))
          .map(v => VOLUNTEER_VIEW.show(v, session?.role))
      })
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
      handler: async ({ limit, ...task }, { session }) => {
        const exact = VOLUNTEER_VIEW.sees('location', session?.role)
        return {
          matches: (await all())
            .map(v => ({ volunteer_id: v.volunteer_id, name: v.name, ...volunteerScore(exact ? v : { ...v, location: coarse(v.location) }, task) }))
            .sort((a, b) => b.score - a.score || a.distance_km - b.distance_km || a.name.localeCompare(b.name))
            .slice(0, limit)
            .map(({ distance_km: km, ...match }) => exact ? { ...match, distance_km: km } : match)
        }
      }
    })
  ]
}
