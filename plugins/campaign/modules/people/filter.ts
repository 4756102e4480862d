// A saved list's filter: which people it holds, by tags, issues, geography, roles, consent and
// activity. Every condition given must hold; a list of values within one condition means any of them.
// A role runs a filter only on the fields of a person it sees (PERSON_VIEW): a condition reading
// another is refused, and the free-text search looks only in the fields it sees. A saved filter is
// shown to a role only as far as it reads fields the role sees (shownFilter).
import { Type } from '../../../../kernel/schema.js'
import type { Static } from '@sinclair/typebox'
import { PeopleView, type ViewField, type Role } from '../../module-kit.js'
import { manifest } from './manifest.js'
import type { Person } from './directory.js'

/** What each role sees of a person (the manifest's view). */
export const PERSON_VIEW = new PeopleView<Person>('person', manifest.views.person)

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
  search: Type.Optional(Type.String({ maxLength: 200, description: 'in the name, e-mail or phone (those of them the caller\'s role sees)' }))
}, { additionalProperties: false })

export type ListFilter = Static<typeof ListFilterSchema>

/** The fields of a person each condition reads (consent: may be contacted, so the address too). */
export const CONDITION_FIELDS: { readonly [K in Exclude<keyof ListFilter, 'search'>]-?: ReadonlyArray<ViewField<Person>> } = {
  tags: ['tags'],
  any_tags: ['tags'],
  issues: ['issues'],
  cities: ['city'],
  postcode_prefixes: ['postcode'],
  roles: ['roles'],
  consent: ['consent', 'email', 'phone'],
  active_within_days: ['last_activity_at'],
  inactive_for_days: ['last_activity_at']
}

/** Where `search` looks, of the fields the searching role sees. */
export const SEARCH_FIELDS = ['name', 'email', 'phone'] as const
export type SearchField = typeof SEARCH_FIELDS[number]

/** A filter as one caller runs it: its search confined to the fields the caller sees. */
export interface ScopedFilter { filter: ListFilter, searchIn: readonly SearchField[] }

/** Whether `role` may run `filter`: it sees every field its conditions read. */
export const mayRun = (filter: ListFilter, role: Role | undefined): boolean => PERSON_VIEW.unseen(role, filter, CONDITION_FIELDS) === undefined

/** `filter` as `role` runs it through `fn`: refused (403) when a condition reads a field the role does not see; its search over the fields the role sees. */
export function filterAs (filter: ListFilter, role: Role | undefined, fn: string): ScopedFilter {
  PERSON_VIEW.refuseUnseen(role, `filter ${fn}`, filter, CONDITION_FIELDS)
  return { filter, searchIn: PERSON_VIEW.visibleOf(SEARCH_FIELDS, role) }
}

/** A saved filter as one role is shown it, and the conditions left out of it. */
export interface ShownFilter { filter: ListFilter, withheld: Array<keyof ListFilter> }

/**
 * What `role` is shown of a saved `filter`: each condition whose fields it sees, and `search` only
 * when it sees every field a search looks in, since the text staff typed may be an e-mail address or
 * a phone number (a role seeing names only cannot tell it is not). The rest is `withheld`, named.
 */
export function shownFilter (filter: ListFilter, role: Role | undefined): ShownFilter {
  const reads: Readonly<Record<string, ReadonlyArray<ViewField<Person>> | undefined>> = { ...CONDITION_FIELDS, search: SEARCH_FIELDS }
  const shown: Record<string, unknown> = {}
  const withheld: Array<keyof ListFilter> = []
  for (const [condition, value] of Object.entries(filter)) {
    if (value === undefined) continue
    // A condition no longer known reads fields nobody can name: withheld too.
    const fields = reads[condition]
    if (fields !== undefined && fields.every(field => PERSON_VIEW.sees(field, role))) shown[condition] = value
    else withheld.push(condition as keyof ListFilter)
  }
  return { filter: shown as ListFilter, withheld }
}

/** `filter` over every field: for the server's own use of a saved list (sending to its members). */
export const wholeFilter = (filter: ListFilter): ScopedFilter => ({ filter, searchIn: SEARCH_FIELDS })

const DAY_MS = 86_400_000
const lower = (words: readonly string[] | undefined): string[] | undefined => words?.map(w => w.toLowerCase())

/** Whether `person` is in a list with `filter` at `now`. */
export function matchesFilter (person: Person, { filter, searchIn }: ScopedFilter, now: Date): boolean {
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
    if (!searchIn.some(field => person[field].toLowerCase().includes(needle))) return false
  }
  return true
}
