// A saved list's filter: which people it holds, by tags, issues, geography, roles, consent and
// activity. Every condition given must hold; a list of values within one condition means any of them.
import { Type } from '../../../../kernel/schema.js'
import type { Static } from '@sinclair/typebox'
import type { Person } from './directory.js'

const Word = Type.String({ minLength: 1, maxLength: 64 })

export const ListFilterSchema = Type.Object({
  tags: Type.Optional(Type.Array(Word, { maxItems: 50, description: 'has every one of these tags' })),
  any_tags: Type.Optional(Type.Array(Word, { maxItems: 50, description: 'has at least one of these tags' })),
  issues: Type.Optional(Type.Array(Word, { maxItems: 50, description: 'cares about at least one of these issues' })),
  cities: Type.Optional(Type.Array(Word, { maxItems: 50, description: 'lives in one of these cities' })),
  postcode_prefixes: Type.Optional(Type.Array(Word, { maxItems: 50, description: 'a postcode starting with one of these' })),
  roles: Type.Optional(Type.Array(Type.Union([Type.Literal('volunteer'), Type.Literal('donor')]), { maxItems: 2, description: 'has one of these roles' })),
  consent: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('sms')], { description: 'may be contacted on this channel' })),
  active_within_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36500, description: 'did something within this many days' })),
  inactive_for_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36500, description: 'did nothing for at least this many days (or never)' })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'in the name, e-mail or phone' }))
}, { additionalProperties: false })

export type ListFilter = Static<typeof ListFilterSchema>

const DAY_MS = 86_400_000
const lower = (words: readonly string[] | undefined): string[] | undefined => words?.map(w => w.toLowerCase())

/** Whether `person` is in a list with `filter` at `now`. */
export function matchesFilter (person: Person, filter: ListFilter, now: Date): boolean {
  const tags = person.tags.map(t => t.toLowerCase())
  const has = (wanted: string[] | undefined, held: string[], every = false): boolean =>
    wanted === undefined || wanted.length === 0 || (every ? wanted.every(w => held.includes(w)) : wanted.some(w => held.includes(w)))
  if (!has(lower(filter.tags), tags, true)) return false
  if (!has(lower(filter.any_tags), tags)) return false
  if (!has(lower(filter.issues), person.issues.map(i => i.toLowerCase()))) return false
  if (!has(lower(filter.cities), [person.city.toLowerCase()])) return false
  const prefixes = lower(filter.postcode_prefixes)
  if (prefixes !== undefined && prefixes.length > 0 && !prefixes.some(p => person.postcode.toLowerCase().startsWith(p))) return false
  if (filter.roles !== undefined && filter.roles.length > 0 && !filter.roles.some(r => person.roles.includes(r))) return false
  if (filter.consent !== undefined && (person.consent.do_not_contact || !person.consent[filter.consent] || (filter.consent === 'email' ? person.email : person.phone) === '')) return false
  const activeAt = person.last_activity_at === null ? undefined : Date.parse(person.last_activity_at)
  if (filter.active_within_days !== undefined && (activeAt === undefined || now.getTime() - activeAt > filter.active_within_days * DAY_MS)) return false
  if (filter.inactive_for_days !== undefined && activeAt !== undefined && now.getTime() - activeAt < filter.inactive_for_days * DAY_MS) return false
  if (filter.search !== undefined && filter.search.trim() !== '') {
    const needle = filter.search.trim().toLowerCase()
    if (![person.name.toLowerCase(), person.email, person.phone].some(field => field.includes(needle))) return false
  }
  return true
}
