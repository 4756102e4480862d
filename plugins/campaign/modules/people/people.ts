// The people module's server functions: save, read, list (by filter or saved list), delete and merge
// people, find likely duplicates, and keep saved lists. Each role sees a person through PERSON_VIEW,
// filters people only on what it sees of them, and is shown of a saved list's filter only that (filter.ts).
import { NotFound } from '../../../../kernel/index.js'
import { Type } from '../../../../kernel/schema.js'
import { moduleFunction, type ModuleFunction, type Role, type AuditLog, type CampaignStore } from '../../module-kit.js'
import type { Fundraising } from '../fundraising/index.js'
import { SMS_REPLY_VIEW, type SmsReplies } from '../sending/index.js'
import type { PeopleDirectory} from './directory.js';
import { type Person } from './directory.js'
import { ListFilterSchema, PERSON_VIEW, filterAs, mayRun, shownFilter, type ListFilter } from './filter.js'
import { csvImportFunctions } from './import-csv.js'

const Id = Type.String({ minLength: 1, maxLength: 64 })
const Words = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })

export const PersonArgs = Type.Object({
  person_id: Type.Optional(Id),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.Optional(Type.Union([Type.Literal(''), Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 254 })])),
  phone: Type.Optional(Type.String({ maxLength: 32 })),
  address: Type.Optional(Type.String({ maxLength: 200 })),
  city: Type.Optional(Type.String({ maxLength: 100 })),
  postcode: Type.Optional(Type.String({ maxLength: 16 })),
  tags: Type.Optional(Words),
  issues: Type.Optional(Words),
  custom: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), Type.String({ maxLength: 500 }), { maxProperties: 50 })),
  consent: Type.Optional(Type.Object({
    email: Type.Optional(Type.Boolean()),
    sms: Type.Optional(Type.Boolean()),
    do_not_contact: Type.Optional(Type.Boolean())
  }, { additionalProperties: false }))
}, { additionalProperties: false })

const show = (person: Person, role: Role | undefined): Partial<Person> => PERSON_VIEW.show(person, role)
const normalName = (name: string): string => name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()

/** Groups of people who are likely one person: the same name in the same household or postcode, or the same name where one has no postcode. */
export function likelyDuplicates (people: readonly Person[]): Person[][] {
  const byName = new Map<string, Person[]>()
  for (const person of people) {
    const name = normalName(person.name)
    byName.set(name, [...byName.get(name) ?? [], person])
  }
  const groups: Person[][] = []
  for (const named of byName.values()) {
    if (named.length < 2) continue
    const places = new Map<string, Person[]>()
    const placeless: Person[] = []
    for (const person of named) {
      const place = person.postcode.trim().toLowerCase().replace(/\s+/g, '')
      if (place === '') placeless.push(person)
      else places.set(place, [...places.get(place) ?? [], person])
    }
    const placed = [...places.values()]
    if (placed.length <= 1) {
      const group = [...placed.flat(), ...placeless]
      if (group.length > 1) groups.push(group)
    } else {
      for (const group of placed) if (group.length > 1) groups.push(group)
    }
  }
  return groups
}

export interface PeopleSources { people: PeopleDirectory, store: CampaignStore, fundraising: Fundraising, audit: AuditLog, replies: SmsReplies }

/** Replies to texts person-detail shows, newest first. */
const DETAIL_REPLIES = 50

export function peopleFunctions ({ people, store, fundraising, audit, replies }: PeopleSources): ModuleFunction[] {
  const page = <T>(items: T[], limit: number, cursor?: string): { items: T[], next_cursor: string | null } => {
    const from = cursor === undefined ? 0 : Number.parseInt(cursor, 10) || 0
    return { items: items.slice(from, from + limit), next_cursor: from + limit < items.length ? String(from + limit) : null }
  }
  return [
    moduleFunction({
      name: 'save-person',
      args: PersonArgs,
      handler: async (args, { session }) => show(await people.save(args, session?.email ?? ''), session?.role)
    }),
    moduleFunction({
      name: 'person-detail',
      args: Type.Object({ person_id: Id }, { additionalProperties: false }),
      handler: async ({ person_id: id }, { session }) => {
        const person = await people.get(id)
        if (person === undefined) throw new NotFound(`no person "${id}"`)
        const ids = [person.person_id, ...person.merged_from]
        // The household says who shares the person's address: only the roles that see household_id get it.
        const household = PERSON_VIEW.sees('household_id', session?.role)
          ? { household: (await people.household(person)).filter(p => p.person_id !== person.person_id).map(p => show(p, session?.role)) }
          : {}
        // Their replies to texts (and those of the people merged into them) to the roles that see replies.
        const smsReplies = SMS_REPLY_VIEW.sees('body', session?.role)
          ? { sms_replies: (await replies.ofPeople(ids, DETAIL_REPLIES)).map(reply => SMS_REPLY_VIEW.show(reply, session?.role)) }
          : {}
        return {
          person: show(person, session?.role),
          ...household,
          ...smsReplies,
          history: session?.role === 'admin' || session?.role === 'staff' ? await audit.historyOf('people', ids) : []
        }
      }
    }),
    moduleFunction({
      name: 'list-people',
      args: Type.Object({
        list_id: Type.Optional(Id),
        filter: Type.Optional(ListFilterSchema),
        limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
        cursor: Type.Optional(Type.String({ maxLength: 16 }))
      }, { additionalProperties: false }),
      handler: async ({ list_id: listId, filter, limit, cursor }, { session }) => {
        const list = listId === undefined ? undefined : await people.list(listId)
        const scoped = filterAs({ ...list?.filter, ...filter } satisfies ListFilter, session?.role, 'list-people')
        const matched = await people.matching(scoped)
        const { items, next_cursor: next } = page(matched, limit, cursor)
        // search_in: where this role's search looks, so a page labels its search box by it.
        return { total: matched.length, people: items.map(p => show(p, session?.role)), next_cursor: next, search_in: scoped.searchIn }
      }
    }),
    moduleFunction({
      name: 'delete-person',
      args: Type.Object({ person_id: Id }, { additionalProperties: false }),
      handler: async ({ person_id: id }) => ({ deleted: (await people.remove(id)).person_id })
    }),
    moduleFunction({
      name: 'find-duplicates',
      args: Type.Object({}, { additionalProperties: false }),
      handler: async (_args, { session }) => ({ groups: likelyDuplicates(await people.all()).map(group => group.map(p => show(p, session?.role))) })
    }),
    moduleFunction({
      name: 'merge-people',
      args: Type.Object({ keep_id: Id, merge_ids: Type.Array(Id, { minItems: 1, maxItems: 20 }) }, { additionalProperties: false }),
      handler: async ({ keep_id: keep, merge_ids: others }, { session }) => show(await people.merge(keep, others), session?.role)
    }),
    moduleFunction({
      name: 'save-list',
      args: Type.Object({ list_id: Type.Optional(Id), name: Type.String({ minLength: 1, maxLength: 100 }), filter: ListFilterSchema }, { additionalProperties: false }),
      handler: async (args, { session }) => {
        const list = await people.saveList(args, session?.email ?? '')
        return { ...list, count: (await people.matching(filterAs(list.filter, session?.role, 'save-list'))).length }
      }
    }),
    moduleFunction({
      name: 'list-lists',
      args: Type.Object({}, { additionalProperties: false }),
      // A role is shown the lists whose filter it may run, each counted as it runs it, and of each
      // filter what reads only fields it sees: a search staff typed may be an address or a number.
      handler: async (_args, { session }) => ({
        lists: await Promise.all((await people.lists()).filter(list => mayRun(list.filter, session?.role))
          .map(async list => {
            const { filter, withheld } = shownFilter(list.filter, session?.role)
            const count = (await people.matching(filterAs(list.filter, session?.role, 'list-lists'))).length
            return { ...list, filter, ...(withheld.length > 0 && { withheld }), count }
          }))
      })
    }),
    moduleFunction({
      name: 'delete-list',
      args: Type.Object({ list_id: Id }, { additionalProperties: false }),
      handler: async ({ list_id: id }) => { await people.removeList(id); return { deleted: id } }
    }),
    ...csvImportFunctions({ people, store, fundraising })
  ]
}
