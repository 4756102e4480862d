// Volunteer matching: the roster (save-volunteer, list-volunteers, volunteer-detail) and match-volunteer,
// which ranks volunteers for a task by the score of volunteer-score.ts.
import { randomUUID } from 'node:crypto'
import type { Database } from 'lmdb'
import { NotFound } from '../../../kernel/index.js'
import { Type } from '../../../kernel/schema.js'
import { serverFunction, type ServerFunction } from '../functions.js'
import { volunteerScore } from './volunteer-score.js'

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

export type VolunteerDb = Database<Volunteer, string>

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

const VIEWERS = ['staff', 'volunteer', 'readonly'] as const

export function volunteerFunctions (db: VolunteerDb): ServerFunction[] {
  const all = (): Volunteer[] => [...db.getRange()].map(({ value }) => value)
  return [
    serverFunction({
      name: 'save-volunteer',
      module: 'volunteers',
      access: ['staff'],
      args: SaveArgs,
      handler: async ({ volunteer_id: id, ...fields }) => {
        if (id !== undefined && db.get(id) === undefined) throw new NotFound(`no volunteer "${id}"`)
        const volunteer: Volunteer = { volunteer_id: id ?? randomUUID(), ...fields, updated_at: new Date().toISOString() }
        await db.put(volunteer.volunteer_id, volunteer)
        return volunteer
      }
    }),
    serverFunction({
      name: 'list-volunteers',
      module: 'volunteers',
      access: VIEWERS,
      args: Type.Object({ skill: Type.Optional(Skill) }, { additionalProperties: false }),
      handler: ({ skill }) => ({
        volunteers: all()
          .filter(v => skill === undefined || v.skills.some(s => s.toLowerCase() === skill.toLowerCase()))
          .map(({ volunteer_id: id, name, skills, availability }) => ({ volunteer_id: id, name, skills, availability }))
          .sort((a, b) => a.name.localeCompare(b.name))
      })
    }),
    serverFunction({
      name: 'volunteer-detail',
      module: 'volunteers',
      access: VIEWERS,
      args: Type.Object({ volunteer_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      handler: ({ volunteer_id: id }) => {
        const volunteer = db.get(id)
        if (volunteer === undefined) throw new NotFound(`no volunteer "${id}"`)
        return volunteer
      }
    }),
    serverFunction({
      name: 'match-volunteer',
      module: 'volunteers',
      access: VIEWERS,
      args: MatchArgs,
      handler: ({ limit, ...task }) => ({
        matches: all()
          .map(v => ({ volunteer_id: v.volunteer_id, name: v.name, ...volunteerScore(v, task) }))
          .sort((a, b) => b.score - a.score || a.distance_km - b.distance_km || a.name.localeCompare(b.name))
          .slice(0, limit)
      })
    })
  ]
}
